package tune

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/portmatrix/portmatrix/internal/results"
)

// Program runs a target's built program once over the configurations in
// configFile (the harness's --configs; "" for the generated values alone)
// and returns its kernel records, each naming its configuration; an error
// means the process stopped early, after the records it returns.
type Program func(ctx context.Context, t Target, configFile string) ([]results.Record, error)

// Harness evaluates a batch in one process of the cell's program: the data
// and reference are set up once, and every configuration is measured with
// the harness's protocol, every run verified. A process that stops early
// (a launch the device refuses) marks the configuration it stopped at as
// failed, and the rest of the batch runs in a new process.
type Harness struct {
	Run Program
	Dir string // where the configuration files are written
}

// Evaluate implements Evaluator.
func (h Harness) Evaluate(ctx context.Context, b Batch, got func(Measurement) error) error {
	todo := b.Configs
	for len(todo) > 0 {
		flags := make([]string, len(todo))
		byFlag := map[string]Config{}
		for i, c := range todo {
			flags[i] = b.Target.Space.Flag(c)
			byFlag[flags[i]] = c
		}
		file := ""
		if flags[0] != "" {
			f, err := os.CreateTemp(h.Dir, "configs-*")
			if err != nil {
				return err
			}
			file = f.Name()
			_, werr := f.WriteString(strings.Join(flags, "\n") + "\n")
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return werr
			}
		}
		recs, runErr := h.Run(ctx, b.Target, file)
		if file != "" {
			os.Remove(file)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		done := 0
		for _, r := range recs {
			flag := Config(r.Config).String()
			c, ok := byFlag[flag]
			if !ok || done >= len(todo) || flags[done] != flag {
				return fmt.Errorf("%s size %d: the program measured configuration %q, not %q", b.Target.Cell, b.Target.Size, flag, flags[min(done, len(flags)-1)])
			}
			m := Measure(fmt.Sprintf("%s/%d/%s", b.Target.Cell, b.Target.Size, flag), c, [][]float64{r.TimesS}, r.Verified && r.Error == "", r.Bytes)
			m.Clock = r.Clock
			if r.Error != "" {
				m.Error = r.Error
			}
			if err := got(m); err != nil {
				return err
			}
			done++
		}
		todo = todo[done:]
		if runErr == nil {
			if len(todo) > 0 {
				return fmt.Errorf("%s size %d: the program measured %d of %d configurations and exited 0", b.Target.Cell, b.Target.Size, done, done+len(todo))
			}
			return nil
		}
		if len(todo) == 0 {
			return nil
		}
		// The configuration the process died on is data: a failure.
		if err := got(Measurement{Config: todo[0], Error: runErr.Error()}); err != nil {
			return err
		}
		todo = todo[1:]
	}
	return nil
}
