package diag

import (
	"fmt"
	"strings"
)

// CheckPositioned returns an error unless every line of err's text starts
// with file (as file, file:line or file:line:col): the fuzz tests' check
// that the loaders position every error.
func CheckPositioned(err error, file string) error {
	if err == nil {
		return nil
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, file+":") && line != file {
			return fmt.Errorf("unpositioned error line %q", line)
		}
	}
	return nil
}
