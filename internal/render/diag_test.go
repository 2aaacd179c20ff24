package render_test

import "github.com/portmatrix/portmatrix/internal/diag"

type diagList struct{ l diag.List }
