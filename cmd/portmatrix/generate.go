package main

// `go generate ./...` is a third front end of the stage table beside the
// magefile and this CLI: it regenerates generated/ exactly as
// `go run mage.go generate` does, by running this command's generate stage.
// go generate runs a directive in its package's directory; -C moves go run to
// the repository root first, so that paths and messages read as mage's do.
//
//go:generate go run -C ../.. ./cmd/portmatrix generate
