package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An item_state node stands for two forms of a team body: ItemForm(true)
// keeps the register form (Body) and drops the team's Item views,
// ItemForm(false) keeps the scratch form (Else) and every view; the tree it
// is given is not changed, and Kinds asks a backend for both forms'
// patterns but not for item_state, which the renderer lowers itself.
func TestItemForm(t *testing.T) {
	items := func(code string) *Node {
		return &Node{Kind: "team_thread_for", Index: "t", Begin: "0", End: "T", Body: []*Node{{Kind: "code", Code: code}}}
	}
	team := &Node{Kind: "team", League: "L", TeamSize: "T", Vector: "V",
		Scratch: []Scratch{{Name: "tile", Type: "double", Size: "16", Level: "0"}, {Name: "acc", Type: "double", Size: "T * V", Level: "0", Item: true}},
		Body: []*Node{{Kind: "code", Code: "top();"}, {Kind: ItemState,
			Body: []*Node{{Kind: "code", Code: "double c;"}, items("c += 1;")},
			Else: []*Node{items("acc[t] += 1;"), {Kind: "team_barrier"}}}}}
	k := &Kernel{Pattern: &Node{Kind: Launches, Body: []*Node{team}}}

	regs := k.Pattern.ItemForm(true).Body[0]
	assert.Equal(t, []string{"tile"}, scratchNames(regs))
	assert.Equal(t, []string{"code", "code", "team_thread_for"}, kinds(regs.Body))
	assert.Equal(t, "c += 1;", regs.Body[2].Body[0].Code)

	scr := k.Pattern.ItemForm(false).Body[0]
	assert.Equal(t, []string{"tile", "acc"}, scratchNames(scr))
	assert.Equal(t, []string{"code", "team_thread_for", "team_barrier"}, kinds(scr.Body))

	assert.Equal(t, []string{"tile", "acc"}, scratchNames(team), "the tree given is not changed")
	assert.Equal(t, ItemState, team.Body[1].Kind)
	assert.Equal(t, []string{"code", Launches, "team_barrier", "team_scratch", "team_thread_for"}, k.Kinds())

	plain := &Node{Kind: "team", Body: []*Node{{Kind: "code", Code: "x();"}}}
	assert.Same(t, plain, plain.ItemForm(true), "a tree without item_state is its own form")
}

func scratchNames(n *Node) []string {
	var out []string
	for _, s := range n.Scratch {
		out = append(out, s.Name)
	}
	return out
}

func kinds(ns []*Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Kind)
	}
	return out
}
