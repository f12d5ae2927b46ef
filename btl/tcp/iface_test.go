package tcp

import (
	"net"
	"testing"
)

func TestPickAddr(t *testing.T) {
	avail := []ifAddr{
		{"lo", net.IPv4(127, 0, 0, 1).To4(), true},
		{"eth0", net.IPv4(192, 0, 2, 2).To4(), false},
		{"eth1", net.IPv4(10, 77, 0, 1).To4(), false},
	}
	tests := []struct {
		inc, exc []string
		loopback bool
		want     string
	}{
		{nil, nil, false, "192.0.2.2"},
		{nil, nil, true, "127.0.0.1"},
		{[]string{"eth1"}, nil, false, "10.77.0.1"},
		{[]string{"eth1"}, nil, true, "10.77.0.1"},
		{[]string{"10.77.0.0/24"}, nil, false, "10.77.0.1"},
		{[]string{"lo"}, nil, false, "127.0.0.1"},
		{[]string{"127.0.0.0/8"}, nil, false, "127.0.0.1"},
		{nil, []string{"eth0"}, false, "10.77.0.1"},
		{nil, []string{"192.0.2.0/24"}, false, "10.77.0.1"},
		{nil, []string{"eth0", "eth1"}, false, ""},
		{[]string{"eth9"}, nil, false, ""},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.IfInclude, cfg.IfExclude, cfg.Loopback = tt.inc, tt.exc, tt.loopback
		ip, err := pickAddr(cfg, avail)
		got := ""
		if err == nil {
			got = ip.String()
		}
		if got != tt.want {
			t.Errorf("pickAddr(inc %v, exc %v, loopback %v) = %q, %v; want %q", tt.inc, tt.exc, tt.loopback, got, err, tt.want)
		}
		if tt.want == "" && (err == nil || !contains(err.Error(), "btl_tcp_if_include")) {
			t.Errorf("pickAddr error %v does not name the parameters", err)
		}
	}
}
