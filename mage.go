//go:build ignore

// Zero-install entry point: go run mage.go <target>.
package main

import (
	"os"

	"github.com/magefile/mage/mage"
)

func main() { os.Exit(mage.Main()) }
