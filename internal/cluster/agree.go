package cluster

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/results"
)

// Agreement compares one (cell, size) measured on several GPUs.
type Agreement struct {
	Cell  string     `json:"cell"`
	Size  int64      `json:"size"`
	GPUs  []GPUTimes `json:"gpus"`
	Agree bool       `json:"agree"`
	// Ratio is the largest median over the smallest.
	Ratio float64 `json:"ratio"`
}

// GPUTimes is one GPU's repetitions of an item.
type GPUTimes struct {
	UUID   string  `json:"uuid"`
	Median float64 `json:"median_s"`
	Min    float64 `json:"min_s"`
	Max    float64 `json:"max_s"`
}

// Agree checks, for every (cell, size) that records of two or more GPUs
// measured (verified ones only), that the GPUs agree within their intervals:
// each GPU's median lies within every other GPU's spread of repetitions
// [min, max]. A GPU that is slower or faster than the others' repetitions
// ever were is flagged.
func Agree(recs []results.Record) []Agreement {
	type key struct {
		cell string
		size int64
	}
	by := map[key]map[string]GPUTimes{}
	for _, r := range recs {
		uuid := r.GPUUUID
		if r.Kind != "kernel" || !r.Verified || uuid == "" {
			continue
		}
		k := key{r.Cell, r.Size}
		g := GPUTimes{UUID: uuid, Median: r.MedianS, Min: r.MinS, Max: r.MedianS}
		for _, v := range r.TimesS {
			g.Max = max(g.Max, v)
		}
		if by[k] == nil {
			by[k] = map[string]GPUTimes{}
		}
		by[k][uuid] = g
	}
	var out []Agreement
	for k, gs := range by {
		if len(gs) < 2 {
			continue
		}
		a := Agreement{Cell: k.cell, Size: k.size, Agree: true}
		lo, hi := 0.0, 0.0
		for _, u := range sortedKeys(gs) {
			g := gs[u]
			a.GPUs = append(a.GPUs, g)
			if lo == 0 || g.Median < lo {
				lo = g.Median
			}
			if g.Median > hi {
				hi = g.Median
			}
		}
		for _, x := range a.GPUs {
			for _, y := range a.GPUs {
				if x.Median < y.Min || x.Median > y.Max {
					a.Agree = false
				}
			}
		}
		if lo > 0 {
			a.Ratio = hi / lo
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cell != out[j].Cell {
			return out[i].Cell < out[j].Cell
		}
		return out[i].Size < out[j].Size
	})
	return out
}

// PrintAgreement prints one line per compared item, DISAGREE first.
func PrintAgreement(w io.Writer, as []Agreement) {
	if len(as) == 0 {
		return
	}
	bad := 0
	for _, a := range as {
		if !a.Agree {
			bad++
		}
	}
	fmt.Fprintf(w, "gpu agreement: %d items measured on every GPU, %d disagree\n", len(as), bad)
	for _, pass := range []bool{false, true} {
		for _, a := range as {
			if a.Agree != pass {
				continue
			}
			word := "agree"
			if !a.Agree {
				word = "DISAGREE"
			}
			var parts []string
			for _, g := range a.GPUs {
				parts = append(parts, fmt.Sprintf("%s %.4g s [%.4g, %.4g]", shortUUID(g.UUID), g.Median, g.Min, g.Max))
			}
			fmt.Fprintf(w, "  %-8s %s size %d: %s (max/min median %.3f)\n", word, a.Cell, a.Size, strings.Join(parts, "; "), a.Ratio)
		}
	}
}

func shortUUID(u string) string {
	if len(u) > 12 {
		return u[:12]
	}
	return u
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
