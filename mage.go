//go:build ignore

// Zero-install entry point: go run mage.go <target>.
package main

import (
	"os"

	"github.com/magefile/mage/mage"

	"github.com/portmatrix/portmatrix/internal/signals"
)

func main() {
	// SIGINT or SIGTERM here, or the death of `go run` above, stops the
	// pipeline below cleanly (internal/signals).
	signals.Forward()
	os.Exit(mage.Main())
}
