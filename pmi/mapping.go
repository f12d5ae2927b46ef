package pmi

import (
	"fmt"
	"strconv"
	"strings"
)

// maxMappingBlocks bounds the blocks of a PMI_process_mapping value.
const maxMappingBlocks = 4096

// ParseProcessMapping decodes the PMI_process_mapping job attribute into
// the node index of each of size ranks.
//
// The value is "(vector,(START,NODES,PER),...)": each block places PER
// consecutive ranks on each of the nodes START..START+NODES-1 in turn; the
// list of blocks repeats until every rank is placed. Slurm's -N3 -n6 gives
// (vector,(0,3,2)) (ranks 0,1 on node 0, 2,3 on node 1, ...); Hydra's
// round-robin placement gives (vector,(0,3,1)) (rank r on node r%3).
func ParseProcessMapping(s string, size int) ([]int, error) {
	bad := func(why string) error {
		return fmt.Errorf("pmi: PMI_process_mapping %q: %s; want (vector,(START,NODES,PER),...)", clipStr(s), why)
	}
	if size < 1 {
		return nil, fmt.Errorf("pmi: PMI_process_mapping for %d ranks; want at least 1", size)
	}
	t := strings.ReplaceAll(s, " ", "")
	if !strings.HasPrefix(t, "(vector") || !strings.HasSuffix(t, ")") {
		return nil, bad("not a vector")
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "(vector"), ")")
	type block struct{ start, nodes, per int }
	var blocks []block
	for t != "" {
		if !strings.HasPrefix(t, ",(") {
			return nil, bad("expected ,( before a block")
		}
		end := strings.IndexByte(t, ')')
		if end < 0 {
			return nil, bad("unterminated block")
		}
		f := strings.Split(t[2:end], ",")
		t = t[end+1:]
		if len(f) != 3 {
			return nil, bad("a block has " + strconv.Itoa(len(f)) + " numbers, not 3")
		}
		var b [3]int
		for i, x := range f {
			n, err := strconv.Atoi(x)
			if err != nil || n < 0 || n > 1<<20 {
				return nil, bad(fmt.Sprintf("block number %q is not an integer in 0..%d", x, 1<<20))
			}
			b[i] = n
		}
		if b[1] == 0 || b[2] == 0 {
			return nil, bad("a block with 0 nodes or 0 ranks per node")
		}
		if len(blocks) == maxMappingBlocks {
			return nil, bad(fmt.Sprintf("more than %d blocks", maxMappingBlocks))
		}
		blocks = append(blocks, block{b[0], b[1], b[2]})
	}
	if len(blocks) == 0 {
		return nil, bad("no block")
	}
	nodes := make([]int, size)
	r := 0
	for r < size {
		for _, b := range blocks {
			for n := b.start; n < b.start+b.nodes && r < size; n++ {
				for k := 0; k < b.per && r < size; k++ {
					nodes[r] = n
					r++
				}
			}
		}
	}
	return nodes, nil
}

func clipStr(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
