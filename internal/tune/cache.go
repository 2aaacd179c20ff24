package tune

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// Key names one evaluation: the same cell, size, configuration, binary and
// device measure the same thing, so a key is evaluated once.
type Key struct {
	Cell     string `json:"cell"`
	Size     int64  `json:"size"`
	Config   string `json:"config"`    // Config.String()
	BuildKey string `json:"build_key"` // the binary's content hash (build manifest)
	Device   string `json:"device"`    // GPU UUID, or the device's model name
}

// Measurement is one configuration evaluated: the median time of its
// repetitions with the confidence interval of the median (stats.Level),
// and whether its output verified. An unverified configuration never wins.
type Measurement struct {
	Config   Config
	MedianS  float64
	LoS, HiS float64
	GBps     float64 // at the median, when the kernel counts bytes
	Verified bool
	Error    string // the evaluation failed (a launch the device refused): data, not a crash
	Default  bool   // the configuration the program is generated with (tuning.jsonl "default")
	// Clock is the clock of the times (results.Record.TimedBy of the
	// harness's record); "" in entries written before records named it.
	Clock string
}

// Entry is one line of tuning.jsonl.
type Entry struct {
	Key
	// DeviceName is the device's model name (nvidia-smi's name) where Device
	// is its UUID: `run -tuned` takes a cell's best for the model it runs on.
	DeviceName string  `json:"device_name,omitempty"`
	MedianS    float64 `json:"median_s,omitempty"`
	LoS        float64 `json:"lo_s,omitempty"`
	HiS        float64 `json:"hi_s,omitempty"`
	GBps       float64 `json:"gbps,omitempty"`
	Verified   bool    `json:"verified"`
	Error      string  `json:"error,omitempty"`
	Default    bool    `json:"default,omitempty"`
	// DeviceHash is the binary's device code (build.DeviceHash; GPU cells):
	// `run -tuned` takes the best for a later binary of the same device code.
	DeviceHash string `json:"device_hash,omitempty"`
	// Clock is the clock of the evaluation's times (docs/results-format.md;
	// absent in older entries: the clock their toolchain's records had).
	Clock string `json:"clock,omitempty"`
}

// Cache is the tuning.jsonl of a results folder: every evaluation appended
// and synced to disk as it is made.
type Cache struct {
	File       string
	DeviceName string // written into the entries Put appends
	mu         sync.Mutex
	f          *os.File
	got        map[Key]Measurement
	seen       []Key             // in file order
	names      map[string]string // device -> its model name, from the entries read
	codes      map[string]string // build key -> its device code's hash, from the entries read
}

// newCache is dir's tuning.jsonl, not read yet.
func newCache(dir string) *Cache {
	return &Cache{File: CachePath(dir), got: map[Key]Measurement{}, names: map[string]string{},
		codes: map[string]string{}}
}

// Warnings receives the torn last line a cut tuning left.
var Warnings io.Writer = os.Stderr

// OpenCache reads dir/tuning.jsonl (if any) and opens it for appending. A
// torn last line (a tuning killed while writing) is cut off with a warning:
// its configuration is evaluated again. Any other bad line is an error at
// file:line.
func OpenCache(dir string) (*Cache, error) {
	c := newCache(dir)
	data, err := os.ReadFile(c.File)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	keep, err := c.read(data)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if keep < len(data) {
		if err := os.Truncate(c.File, int64(keep)); err != nil {
			return nil, err
		}
	}
	c.f, err = os.OpenFile(c.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if keep > 0 && data[keep-1] != '\n' { // a whole last entry without its newline
		if _, err := c.f.Write([]byte{'\n'}); err != nil {
			c.f.Close()
			return nil, err
		}
	}
	return c, nil
}

// read loads the entries of data and returns how many bytes to keep.
func (c *Cache) read(data []byte) (int, error) {
	var errs diag.List
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	lines := bytes.Count(data, []byte{'\n'})
	torn := len(data) > 0 && data[len(data)-1] != '\n'
	keep := len(data)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Entry
		err := json.Unmarshal(b, &e)
		var cfg Config
		if err == nil {
			cfg, err = ParseConfig(e.Config)
		}
		if err != nil {
			if torn && line == lines+1 {
				keep = bytes.LastIndexByte(data, '\n') + 1
				fmt.Fprintf(Warnings, "warning: %s:%d: torn last line (%d bytes) dropped; its configuration is evaluated again\n", c.File, line, len(data)-keep)
				continue
			}
			errs.Add(diag.Pos{File: c.File, Line: line}, "%v", err)
			continue
		}
		if e.DeviceName != "" {
			c.names[e.Device] = e.DeviceName
		}
		if e.DeviceHash != "" {
			c.codes[e.BuildKey] = e.DeviceHash
		}
		if _, ok := c.got[e.Key]; !ok {
			c.seen = append(c.seen, e.Key)
		}
		c.got[e.Key] = Measurement{Config: cfg, MedianS: e.MedianS, LoS: e.LoS, HiS: e.HiS, GBps: e.GBps,
			Verified: e.Verified, Error: e.Error, Default: e.Default, Clock: e.Clock}
	}
	if err := sc.Err(); err != nil {
		errs.Add(diag.Pos{File: c.File}, "%v", err)
	}
	return keep, errs.Err()
}

// Get returns the cached evaluation of k.
func (c *Cache) Get(k Key) (Measurement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.got[k]
	return m, ok
}

// Len is the number of evaluations cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// Put appends an evaluation of a binary of device code deviceHash ("" for
// a host cell) and syncs it to disk before returning.
func (c *Cache) Put(k Key, deviceHash string, m Measurement) error {
	b, err := json.Marshal(Entry{Key: k, DeviceName: c.DeviceName, MedianS: m.MedianS, LoS: m.LoS, HiS: m.HiS, GBps: m.GBps,
		Verified: m.Verified, Error: m.Error, Default: m.Default, DeviceHash: deviceHash, Clock: m.Clock})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(append(b, '\n')); err != nil {
		return err
	}
	c.got[k] = m
	return c.f.Sync()
}

// Close closes the file.
func (c *Cache) Close() error { return c.f.Close() }

// Evaluations reads a folder's tuning.jsonl without changing it: each
// evaluation once (the last written of a key, as the cache keeps it), in
// the order the keys were first written. A folder without one has none.
func Evaluations(dir string) ([]Key, []Measurement, error) {
	c := newCache(dir)
	data, err := os.ReadFile(c.File)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.read(data); err != nil {
		return nil, nil, err
	}
	ms := make([]Measurement, len(c.seen))
	for i, k := range c.seen {
		ms[i] = c.got[k]
	}
	return c.seen, ms, nil
}

// Tuned reads a folder's tuning.jsonl into one result per (cell, size,
// build key, device), each with its best configuration and ties, sorted by
// cell, size, device and build key: what `run` takes tuned configurations
// from. The default is the entry marked `default`; in a file older than
// the mark, the first evaluation of the (cell, size, build key, device),
// which the tuner measures first unless a constraint rules it out
// (DefaultGuessed says so).
func Tuned(dir string) ([]*CellResult, error) {
	c := newCache(dir)
	data, err := os.ReadFile(c.File)
	if err != nil {
		return nil, err
	}
	if _, err := c.read(data); err != nil {
		return nil, err
	}
	type group struct {
		cell, build, device string
		size                int64
	}
	by := map[group]*CellResult{}
	for _, k := range slices.SortedFunc(maps.Keys(c.got), func(a, b Key) int { return strings.Compare(a.Config, b.Config) }) {
		g := group{k.Cell, k.BuildKey, k.Device, k.Size}
		if by[g] == nil {
			by[g] = &CellResult{Cell: k.Cell, Size: k.Size, BuildKey: k.BuildKey, DeviceHash: c.codes[k.BuildKey], Device: k.Device,
				DeviceName: c.names[k.Device]}
		}
		by[g].Measured = append(by[g].Measured, c.got[k])
	}
	first, marked := map[group]Config{}, map[group]Config{}
	for _, k := range c.seen {
		g := group{k.Cell, k.BuildKey, k.Device, k.Size}
		if _, ok := first[g]; !ok {
			first[g] = c.got[k].Config
		}
		if c.got[k].Default {
			marked[g] = c.got[k].Config
		}
	}
	var out []*CellResult
	for g, r := range by {
		r.Planned = len(r.Measured)
		r.Cached = r.Planned
		def, ok := marked[g]
		if !ok {
			def, r.DefaultGuessed = first[g], true
		}
		r.pick(def)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *CellResult) int {
		return cmp.Or(strings.Compare(a.Cell, b.Cell), cmp.Compare(a.Size, b.Size),
			strings.Compare(a.Device, b.Device), strings.Compare(a.BuildKey, b.BuildKey))
	})
	return out, nil
}

// Measure makes the Measurement of one configuration from its repetition
// times (seconds, one slice per trial, as results.Record.TimesS), with the
// bootstrap interval of internal/stats (key seeds it: name the cell, size,
// configuration and device). bytes, when not 0, gives GB/s at the median.
// Without a usable time it is an error measurement.
func Measure(key string, c Config, trials [][]float64, verified bool, bytes float64) Measurement {
	m := stats.Measure(key, trials)
	if m == nil {
		return Measurement{Config: c, Error: "no repetition time"}
	}
	out := Measurement{Config: c, MedianS: m.Median, LoS: m.Lo, HiS: m.Hi, Verified: verified}
	if bytes > 0 {
		out.GBps = bytes / m.Median / 1e9
	}
	return out
}

// Pick is one (cell, size, binary) a run measures at its tuned best: the
// binary by its build key, or (a GPU cell) by its device code's hash, which
// a later build of the same device code shares.
type Pick struct {
	Cell       string
	Size       int64
	BuildKey   string
	DeviceHash string
}

// Best reads the tuned best configuration of every (cell, size, binary) a
// folder's tuning measured on a device of model name (a GPU's name, or the
// host's CPU model, which is then the device itself): what `run -tuned`
// measures beside the as-published launch. Where GPUs of one model tuned
// the same cell, the fastest best wins. A cell with no verified
// configuration has no pick.
func Best(dir, name string) (map[Pick]Measurement, error) {
	rs, err := Tuned(dir)
	if err != nil {
		return nil, err
	}
	out := map[Pick]Measurement{}
	for _, r := range rs {
		if r.Best == nil || (r.DeviceName != name && r.Device != name) {
			continue
		}
		picks := []Pick{{Cell: r.Cell, Size: r.Size, BuildKey: r.BuildKey}}
		if r.DeviceHash != "" {
			picks = append(picks, Pick{Cell: r.Cell, Size: r.Size, DeviceHash: r.DeviceHash})
		}
		for _, p := range picks {
			if have, ok := out[p]; !ok || r.Best.MedianS < have.MedianS {
				out[p] = *r.Best
			}
		}
	}
	return out, nil
}
