package diag

import "fmt"

// Suggest returns the known name closest to name (by edit distance, case
// ignored) when it is close enough to be a typo, else "".
func Suggest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		d := distance(lower(name), lower(k))
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD < 0 || bestD == 0 && best == name {
		return ""
	}
	limit := 2
	switch {
	case len(name) <= 3 && !sameLetters(lower(name), lower(best)) && !subsequence(lower(name), lower(best)):
		return "" // icc is not a typo of gcc
	case len(name) <= 4:
		limit = 1
	}
	if len(name) >= 10 {
		limit = 3
	}
	if bestD > limit {
		return ""
	}
	return best
}

// DidYouMean is `; did you mean "X"?` for the closest known name, or "".
func DidYouMean(name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// distance is the Levenshtein distance of a and b, with an adjacent swap
// counted as one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func sameLetters(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[rune]int{}
	for _, r := range a {
		count[r]++
	}
	for _, r := range b {
		count[r]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// subsequence reports whether a is b with letters left out (lvm, llvm).
func subsequence(a, b string) bool {
	i := 0
	for j := 0; j < len(b) && i < len(a); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}
