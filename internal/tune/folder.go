package tune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
)

// The files of a tuning folder (docs/tuning.md). This package is their one
// writer: the tune stage (internal/session) and the joining of a
// scheduler's shards (internal/cluster) call the functions below.
const (
	CacheFile   = "tuning.jsonl"        // every evaluation, fsynced as made (Cache)
	ReportFile  = "tuning.md"           // each tuning's table (AppendReport)
	LogFile     = "tuning.log"          // the output of the programs a tuning runs (OpenLog)
	KernelsFile = "tuning-kernels.json" // the tuned binaries' kernel resources by build key (WriteKernels)
	CheckReport = "tuning-check.md"     // the searches replayed against a ground truth (tunecheck: WriteCheck)
	CheckFile   = "tuning-check.csv"    // the same curves, a row per (cell, size, search, budget) (CheckCSV)
)

// CachePath is dir's tuning.jsonl.
func CachePath(dir string) string { return filepath.Join(dir, CacheFile) }

// Has says whether dir holds a tuning (a tuning.jsonl).
func Has(dir string) bool {
	_, err := os.Stat(CachePath(dir))
	return err == nil
}

// OpenLog opens dir's tuning.log for appending.
func OpenLog(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// processMark begins the line LogProcess writes after a program's output.
const processMark = "# process: "

// LogProcess writes, after a program's output in the tuning log, how many
// records it printed and how long it ran from start to exit: what a
// process costs beyond its records' set-up and measuring (starting it,
// the device's context, loading its kernels), which the dry run reads
// (ReadCosts).
func LogProcess(w io.Writer, records int, seconds float64) {
	fmt.Fprintf(w, "%s%d records in %.3f s\n", processMark, records, seconds)
}

// AppendReport adds a tuning's table (Result.Report) to dir's tuning.md: a
// folder tuned in several calls keeps every call's table, each under the
// time it started.
func AppendReport(dir string, started time.Time, table []byte) error {
	f, err := os.OpenFile(filepath.Join(dir, ReportFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "## Tuned %s\n\n```\n%s```\n\n", started.Format(time.RFC3339), table)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Join writes dir's tuning files from those of the tuning folders shards
// (a scheduler's workers, each with its own cache; in the order given):
// tuning.jsonl holds every evaluation dir held and every one of theirs,
// one of a key in two once, the later shard's; tuning.md their reports, each under its
// folder's name; tuning-kernels.json their kernels. A shard without a
// tuning.jsonl is passed over. Torn last lines (a worker killed while
// writing) are left out: the worker's next tuning measures them again. It
// returns the number of evaluations.
func Join(dir string, shards []string) (int, error) {
	var evals evaluationSet
	var md bytes.Buffer
	// The folder's own evaluations first (an earlier join, or a tuning of
	// the folder in one process): what no shard holds is kept.
	if err := entryLines(CachePath(dir), evals.add); err != nil {
		return 0, err
	}
	for _, shard := range shards {
		if err := entryLines(CachePath(shard), evals.add); err != nil {
			return 0, err
		}
		report, err := os.ReadFile(filepath.Join(shard, ReportFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		if len(report) > 0 {
			fmt.Fprintf(&md, "# %s\n\n%s", filepath.Base(shard), report)
		}
		kernels, err := ReadKernels(shard)
		if err == nil {
			err = WriteKernels(dir, kernels)
		}
		if err != nil {
			return 0, err
		}
	}
	if err := fsutil.WriteFile(CachePath(dir), evals.bytes(), 0o644); err != nil {
		return 0, err
	}
	return len(evals.lines), fsutil.WriteFile(filepath.Join(dir, ReportFile), md.Bytes(), 0o644)
}

// evaluationSet is tuning.jsonl lines by key, in the order first seen, a
// later line replacing an earlier one of the same key (Join, Merge).
type evaluationSet struct {
	at    map[Key]int
	lines [][]byte
}

func (e *evaluationSet) add(k Key, line []byte) {
	if i, ok := e.at[k]; ok {
		e.lines[i] = line
		return
	}
	if e.at == nil {
		e.at = map[Key]int{}
	}
	e.at[k] = len(e.lines)
	e.lines = append(e.lines, line)
}

func (e *evaluationSet) bytes() []byte {
	var out bytes.Buffer
	for _, l := range e.lines {
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// entryLines calls each with the key and the line of every evaluation of
// file, in order; torn lines are passed over, and a missing file has none.
func entryLines(file string, each func(Key, []byte)) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a torn last line
		}
		each(e.Key, slices.Clone(sc.Bytes()))
	}
	return sc.Err()
}

// Seed appends to shard's tuning.jsonl every evaluation of the files from
// (the folder's own tuning.jsonl, the other shards') whose key it lacks,
// so that a worker resuming a tuning finds everything the folder measured
// on its device, whichever shard or earlier tuning of the folder measured
// it: a worker reads only its own shard's cache, and a folder tuned in one
// process, or with another number of workers, holds its evaluations
// elsewhere. It returns the number appended.
func Seed(shard string, from []string) (int, error) {
	have := map[Key]bool{}
	if err := entryLines(CachePath(shard), func(k Key, _ []byte) { have[k] = true }); err != nil {
		return 0, err
	}
	var add bytes.Buffer
	n := 0
	for _, f := range from {
		if err := entryLines(f, func(k Key, line []byte) {
			if !have[k] {
				have[k] = true
				add.Write(line)
				add.WriteByte('\n')
				n++
			}
		}); err != nil {
			return 0, err
		}
	}
	if n == 0 {
		return 0, nil
	}
	c, err := OpenCache(shard) // cuts a torn last line before appending
	if err != nil {
		return 0, err
	}
	_, err = c.f.Write(add.Bytes())
	if err == nil {
		err = c.f.Sync()
	}
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// Merge joins the tuning folders parts into out, which may be one of them
// (a later tuning of the same matrix, another pass on another GPU): every
// evaluation of every part, a later part's winning where two hold the same
// key (the same configuration of the same binary on the same device); each
// part's tuning.log and tuning.md after out's own, under a line naming the
// part; the kernels of every part; and run.json, the last part's. A part
// that is no tuning folder (no tuning.jsonl) is an error naming it, before
// anything is written. It returns the number of evaluations out holds.
func Merge(out string, parts []string) (int, error) {
	var uniq []string
	for _, p := range parts {
		p = filepath.Clean(p)
		if !slices.Contains(uniq, p) {
			uniq = append(uniq, p)
		}
	}
	out = filepath.Clean(out)
	var errs []error
	for _, p := range uniq {
		if !Has(p) {
			errs = append(errs, fmt.Errorf("%s: no %s: not a tuning folder", p, CacheFile))
		}
	}
	if len(uniq) < 2 && !(len(uniq) == 1 && uniq[0] != out) {
		errs = append(errs, fmt.Errorf("merge needs two tuning folders, or one and another output folder"))
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	var evals evaluationSet
	// out's own first, unless it is one of the parts (then in its place).
	sources := uniq
	if !slices.Contains(uniq, out) {
		sources = append([]string{out}, uniq...)
	}
	var logs, reports bytes.Buffer
	kernels := Kernels{}
	for _, src := range sources {
		if err := entryLines(CachePath(src), evals.add); err != nil {
			return 0, err
		}
		for _, f := range []struct {
			name string
			buf  *bytes.Buffer
		}{{LogFile, &logs}, {ReportFile, &reports}} {
			data, err := os.ReadFile(filepath.Join(src, f.name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return 0, err
			}
			if src != out {
				fmt.Fprintf(f.buf, "# merged from %s\n", filepath.ToSlash(src))
			}
			f.buf.Write(data)
			if len(data) > 0 && data[len(data)-1] != '\n' {
				f.buf.WriteByte('\n')
			}
		}
		k, err := ReadKernels(src)
		if err != nil {
			return 0, err
		}
		maps.Copy(kernels, k)
	}
	last := uniq[len(uniq)-1]
	run, err := os.ReadFile(filepath.Join(last, results.RunFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	writes := []struct {
		name string
		data []byte
	}{{CacheFile, evals.bytes()}, {LogFile, logs.Bytes()}, {ReportFile, reports.Bytes()}}
	if len(run) > 0 && last != out {
		writes = append(writes, struct {
			name string
			data []byte
		}{results.RunFile, run})
	}
	for _, w := range writes {
		if err := fsutil.WriteFile(filepath.Join(out, w.name), w.data, 0o644); err != nil {
			return 0, err
		}
	}
	return len(evals.lines), WriteKernels(out, kernels)
}
