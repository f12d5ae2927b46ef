package tcp

import (
	"time"

	"github.com/gorun-mpi/gorun/mca"
)

// Config is the resolved configuration of one tcp module.
type Config struct {
	IfInclude   []string // btl_tcp_if_include
	IfExclude   []string // btl_tcp_if_exclude
	EagerLimit  int      // btl_tcp_eager_limit
	MaxSendSize int      // btl_tcp_max_send_size
	TimeoutSec  int      // btl_tcp_timeout, seconds
	PortMin     int      // btl_tcp_port_min
	PortRange   int      // btl_tcp_port_range
	SpinUsec    int      // btl_tcp_spin_time, microseconds

	// Not MCA parameters.
	Loopback bool // every rank is on this machine: loopback is allowed (and preferred)
	NoDirect bool // Progress always asks epoll which sockets have data (tests; see directMax)
}

// Spin is btl_tcp_spin_time as a duration.
func (c *Config) Spin() time.Duration { return time.Duration(c.SpinUsec) * time.Microsecond }

// Timeout is btl_tcp_timeout as a duration.
func (c *Config) Timeout() time.Duration { return time.Duration(c.TimeoutSec) * time.Second }

// Params declares btl/tcp's parameters, each bound to its Config field, and
// the rules between them, which gorun checks before any rank starts.
var Params = mca.Declare("btl_tcp", []mca.Field[Config]{
	mca.List("btl_tcp_if_include", "", func(c *Config) *[]string { return &c.IfInclude },
		"interfaces (names or CIDR subnets, comma-separated) to listen and connect on; exclusive with btl_tcp_if_exclude"),
	mca.List("btl_tcp_if_exclude", "", func(c *Config) *[]string { return &c.IfExclude },
		"interfaces (names or CIDR subnets, comma-separated) never to use; loopback is excluded unless named in btl_tcp_if_include or every rank is on one machine"),
	mca.Size("btl_tcp_eager_limit", "64k", 0, 64<<20, func(c *Config) *int { return &c.EagerLimit },
		"largest payload sent eagerly over TCP (the PML header does not count); at most btl_tcp_max_send_size"),
	mca.Size("btl_tcp_max_send_size", "128k", 1<<10, 64<<20, func(c *Config) *int { return &c.MaxSendSize },
		"largest payload of one TCP fragment; larger messages travel in pieces of this size"),
	mca.Int("btl_tcp_timeout", "30", 1, 86400, func(c *Config) *int { return &c.TimeoutSec },
		"seconds after which a silent peer (host down, network partition) is declared lost; also bounds the connect phase at Init"),
	mca.Int("btl_tcp_spin_time", "20000", 0, 10_000_000, func(c *Config) *int { return &c.SpinUsec },
		"microseconds a rank whose only sleeper is tcp keeps polling its sockets (non-blocking) before it sleeps in epoll_wait; waking a sleeping rank costs far more than a TCP message on a busy machine; 0 sleeps at once"),
	mca.Int("btl_tcp_port_min", "0", 0, 65535, func(c *Config) *int { return &c.PortMin },
		"lowest TCP port to listen on; 0 lets the kernel choose"),
	mca.Int("btl_tcp_port_range", "100", 1, 65535, func(c *Config) *int { return &c.PortRange },
		"number of ports tried from btl_tcp_port_min up (unused when btl_tcp_port_min is 0)"),
},
	mca.Rule[Config]{Names: []string{"btl_tcp_eager_limit", "btl_tcp_max_send_size"}, Check: func(c *Config) string {
		if c.EagerLimit > c.MaxSendSize {
			return "an eager message is one fragment, so the eager limit must not exceed the max send size"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_tcp_port_min", "btl_tcp_port_range"}, Check: func(c *Config) string {
		if c.PortMin > 0 && c.PortMin+c.PortRange-1 > 65535 {
			return "the port range must end at or below port 65535"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_tcp_if_include", "btl_tcp_if_exclude"}, Check: func(c *Config) string {
		if len(c.IfInclude) > 0 && len(c.IfExclude) > 0 {
			return "only one of the include and exclude lists may be set"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_tcp_if_include"}, Check: func(c *Config) string {
		if _, err := parseIfSpecs("btl_tcp_if_include", c.IfInclude); err != nil {
			return "each item must be an interface name or a CIDR subnet"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_tcp_if_exclude"}, Check: func(c *Config) string {
		if _, err := parseIfSpecs("btl_tcp_if_exclude", c.IfExclude); err != nil {
			return "each item must be an interface name or a CIDR subnet"
		}
		return ""
	}},
)

// DefaultConfig is the configuration the parameter defaults give.
func DefaultConfig() Config { return Params.Defaults() }

// ConfigFrom reads the btl_tcp_* parameters from p and validates them together.
func ConfigFrom(p *mca.Set) (Config, error) { return Params.Config(p) }

// Validate checks c against every parameter's range and the rules.
func (c *Config) Validate() error { return Params.Validate(c) }
