package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/portmatrix/portmatrix/internal/build"
)

func TestTasksInterleaveTrials(t *testing.T) {
	jobs := []Job{{Entry: build.Entry{ID: "a"}, Sizes: []int64{1, 2}}, {Entry: build.Entry{ID: "b"}, Sizes: []int64{1}}}
	var got []string
	for _, x := range Tasks(jobs, 2) {
		got = append(got, x.Unit().String())
	}
	assert.Equal(t, []string{"a@1#1", "a@2#1", "b@1#1", "a@1#2", "a@2#2", "b@1#2"}, got)
	assert.Len(t, Tasks(jobs, 0), 3, "at least one trial")
}

// TestTunedTasks: a size with a tuned best is measured again right after its
// as-published measurement, in every trial, as a unit of its own.
func TestTunedTasks(t *testing.T) {
	jobs := []Job{{Entry: build.Entry{ID: "a"}, Sizes: []int64{1, 2}, Tuned: map[int64]string{2: "team_size=8"}}}
	var got []string
	for _, x := range Tasks(jobs, 2) {
		got = append(got, x.Unit().String()+" "+x.Config)
	}
	assert.Equal(t, []string{"a@1#1 ", "a@2#1 ", "a@2#1+tuned team_size=8", "a@1#2 ", "a@2#2 ", "a@2#2+tuned team_size=8"}, got)
}
