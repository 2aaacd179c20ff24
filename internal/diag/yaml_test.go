package diag

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Value looks at one key of a mapping; a sequence holding the key's name as
// an item is no mapping.
func TestValue(t *testing.T) {
	var errs List
	m := ParseYAML("m.yaml", []byte("a: 1\nb: [x]\n"), &errs)
	require.NoError(t, errs.Err())
	assert.Equal(t, "1", Value(m, "a").Value)
	assert.Nil(t, Value(m, "c"))
	seq := ParseYAML("s.yaml", []byte("[a, 1]\n"), &errs)
	assert.Nil(t, Value(seq, "a"))
	assert.Nil(t, Value(nil, "a"))
}
