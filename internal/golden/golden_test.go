package golden

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAbstractThenExpandIsTheMessage(t *testing.T) {
	v := Vocab{
		{Name: "variants", Items: []string{"serial", "omp-host"}},
		{Name: "variants and strategies", Items: []string{"serial", "omp-host", "omp"}},
	}
	msg := `unknown variant "x" (known: serial, omp-host, omp)` + "\n" + `unknown variant "y" (known: serial, omp-host); did you mean "serial"?`
	abstract := v.Abstract(msg)
	assert.Equal(t, `unknown variant "x" (known: {{variants and strategies}})`+"\n"+`unknown variant "y" (known: {{variants}}); did you mean "serial"?`, abstract)
	assert.Equal(t, msg, v.Expand(abstract))
	// Other lists, and names outside a list, stay.
	assert.Equal(t, `serial (known: in, out)`, v.Abstract(`serial (known: in, out)`))
}
