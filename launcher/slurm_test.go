package launcher

import (
	"reflect"
	"strings"
	"testing"
)

func TestSlurmHosts(t *testing.T) {
	tests := []struct {
		env  []string
		want []Host
		err  string
	}{
		{env: []string{"PATH=/bin"}, want: nil},
		{env: []string{"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=h[1-3]", "SLURM_JOB_CPUS_PER_NODE=2(x2),4"},
			want: []Host{{"h1", 2}, {"h2", 2}, {"h3", 4}}},
		{env: []string{"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=vm", "SLURM_JOB_CPUS_PER_NODE=1"}, want: []Host{{"vm", 1}}},
		{env: []string{"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=h[1-3", "SLURM_JOB_CPUS_PER_NODE=2"}, err: "SLURM_JOB_NODELIST"},
		{env: []string{"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=h[1-3]", "SLURM_JOB_CPUS_PER_NODE=2(x2)"}, err: "does not give the CPUs of the 3 nodes"},
		{env: []string{"SLURM_JOB_ID=7", "SLURM_JOB_NODELIST=h1"}, err: "SLURM_JOB_CPUS_PER_NODE"},
	}
	for _, tt := range tests {
		got, err := slurmHosts(tt.env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("slurmHosts(%q) = %v, %v; want an error containing %q", tt.env, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("slurmHosts(%q) = %v, %v; want %v", tt.env, got, err, tt.want)
		}
	}
	if a := srunArgs("h2", 4, "sh", "-c", "x"); !reflect.DeepEqual(a[len(a)-5:], []string{"--nodelist=h2", "--job-name=gorun-helper", "sh", "-c", "x"}) || a[0] != "srun" {
		t.Errorf("srunArgs = %q", a)
	}
}
