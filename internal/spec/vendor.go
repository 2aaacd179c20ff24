package spec

// A kernel's vendor forms (`vendor:`): the same operation as one or more
// calls of a vendor library (cuBLAS's DGEMM for a matrix multiply), written
// as host C++ over the kernel's arguments (device pointers and scalars). A
// strategy that names the library (variants/strategies.yaml `vendor:`)
// calls that form instead of lowering the kernel's patterns, and applies to
// the kernels that declare one only; the harness times and verifies it as
// every other program (docs/kernels.md, "Vendor forms").

import (
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// VendorForm is one vendor form of a kernel.
type VendorForm struct {
	Library string // the library the strategy names (cublas)
	Code    string // host C++: the body of the kernel's function
	Pos     diag.Pos
}

// VendorForm returns the kernel's form for library, or nil.
func (k *Kernel) VendorForm(library string) *VendorForm {
	for i := range k.Vendor {
		if k.Vendor[i].Library == library {
			return &k.Vendor[i]
		}
	}
	return nil
}

// parseVendor reads `vendor: {<library>: <C++>, ...}`.
func parseVendor(d diag.Decoder, k *Kernel, n *yaml.Node) {
	if n == nil {
		return
	}
	for _, kv := range d.Pairs(n, "vendor") {
		form := VendorForm{Library: kv[0].Value, Code: d.String(kv[1], "vendor "+kv[0].Value), Pos: d.Pos(kv[0])}
		switch {
		case !ident.MatchString(form.Library):
			d.Add(kv[0], "vendor library %q is not a name (a strategy's vendor:, such as cublas)", form.Library)
		case k.VendorForm(form.Library) != nil:
			d.Add(kv[0], "vendor form %q given twice", form.Library)
		case form.Code == "":
			d.Add(kv[1], "vendor form %q needs host C++ calling the library over the kernel's arguments", form.Library)
		}
		k.Vendor = append(k.Vendor, form)
	}
	if k.Pattern == nil && k.Loops == nil && len(k.Vendor) > 0 {
		d.Add(n, "a vendor form stands beside a pattern or loops: a composite calls its kernels' forms")
	}
}
