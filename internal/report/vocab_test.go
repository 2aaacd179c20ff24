package report

import (
	"sync"
	"testing"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

var (
	vocabOnce sync.Once
	vocab     *results.Vocabulary
)

// testVocab is the vocabulary of the repository's own project.
func testVocab(t testing.TB) *results.Vocabulary {
	vocabOnce.Do(func() {
		v, err := vocabulary.Load("../..")
		if err != nil {
			t.Fatal(err)
		}
		vocab = v
	})
	return vocab
}
