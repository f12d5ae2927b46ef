package launcher

import (
	"testing"

	"github.com/gorun-mpi/gorun/mca"
)

func TestRankGOMAXPROCS(t *testing.T) {
	tests := []struct {
		param, np, cores, want int
	}{
		{0, 2, 2, 1},   // a core each
		{0, 1, 8, 8},   // one rank: every core
		{0, 3, 8, 2},   // rounded down
		{0, 8, 2, 1},   // oversubscribed: at least 1
		{0, 1, 1, 1},   // one core
		{4, 8, 2, 4},   // the parameter decides
		{1, 1, 64, 1},  // even below the share
		{0, 0, 2, 2},   // np 0 (rejected earlier) does not divide by zero
		{0, 65, 64, 1}, // more ranks than cores
	}
	for _, tt := range tests {
		if got := rankGOMAXPROCS(tt.param, tt.np, tt.cores); got != tt.want {
			t.Errorf("rankGOMAXPROCS(param %d, np %d, cores %d) = %d; want %d", tt.param, tt.np, tt.cores, got, tt.want)
		}
	}
}

func TestGOMAXPROCSEnv(t *testing.T) {
	set, _, err := mca.Resolve(mca.Inputs{Flags: [][2]string{{"launcher_base_gomaxprocs", "3"}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Params.Config(set)
	if err != nil {
		t.Fatal(err)
	}
	if got := gomaxprocsEnv([]string{"PATH=/bin", "GOMAXPROCSX=1"}, cfg, 2); got != "GOMAXPROCS=3" {
		t.Errorf("without GOMAXPROCS in the environment: %q; want GOMAXPROCS=3", got)
	}
	if got := gomaxprocsEnv([]string{"GOMAXPROCS=7"}, cfg, 2); got != "" {
		t.Errorf("with GOMAXPROCS=7 in the environment: %q; want none (the user's wins)", got)
	}
	if got := gomaxprocsEnv([]string{"GOMAXPROCS="}, cfg, 2); got != "" {
		t.Errorf("with an empty GOMAXPROCS in the environment: %q; want none (Go's default then)", got)
	}
}
