// Package reporttest holds the test fixtures of the report packages: a
// synthetic results folder (RunSpec), an in-memory run (MemResults), the
// repository's vocabulary and spec folder, and golden files.
package reporttest
