package tcp

import (
	"fmt"
	"time"

	"github.com/gorun-mpi/gorun/mca"
)

// Params is btl/tcp's parameter table, registered with mca at init.
var Params = []mca.Param{
	{Name: "btl_tcp_if_include", Type: mca.TypeList, Default: "",
		Help: "interfaces (names or CIDR subnets, comma-separated) to listen and connect on; exclusive with btl_tcp_if_exclude"},
	{Name: "btl_tcp_if_exclude", Type: mca.TypeList, Default: "",
		Help: "interfaces (names or CIDR subnets, comma-separated) never to use; loopback is excluded unless named in btl_tcp_if_include or every rank is on one machine"},
	{Name: "btl_tcp_eager_limit", Type: mca.TypeSize, Default: "64k", Min: 0, Max: 64 << 20,
		Help: "largest payload sent eagerly over TCP (the PML header does not count); at most btl_tcp_max_send_size"},
	{Name: "btl_tcp_max_send_size", Type: mca.TypeSize, Default: "128k", Min: 1 << 10, Max: 64 << 20,
		Help: "largest payload of one TCP fragment; larger messages travel in pieces of this size"},
	{Name: "btl_tcp_timeout", Type: mca.TypeInt, Default: "30", Min: 1, Max: 86400,
		Help: "seconds after which a silent peer (host down, network partition) is declared lost, and the connect phase at Init gives up"},
	{Name: "btl_tcp_port_min", Type: mca.TypeInt, Default: "0", Min: 0, Max: 65535,
		Help: "lowest TCP port to listen on; 0 lets the kernel choose"},
	{Name: "btl_tcp_port_range", Type: mca.TypeInt, Default: "100", Min: 1, Max: 65535,
		Help: "number of ports tried from btl_tcp_port_min up (ignored when btl_tcp_port_min is 0)"},
}

func init() { mca.Register("btl_tcp", Params) }

// Config is the resolved configuration of one tcp module.
type Config struct {
	IfInclude   []string      // btl_tcp_if_include
	IfExclude   []string      // btl_tcp_if_exclude
	EagerLimit  int           // btl_tcp_eager_limit
	MaxSendSize int           // btl_tcp_max_send_size
	Timeout     time.Duration // btl_tcp_timeout
	PortMin     int           // btl_tcp_port_min
	PortRange   int           // btl_tcp_port_range

	// Not MCA parameters.
	Loopback bool // every rank is on this machine: loopback is allowed (and preferred)
}

// DefaultConfig is the configuration the parameter defaults give.
func DefaultConfig() Config {
	return Config{EagerLimit: 64 << 10, MaxSendSize: 128 << 10, Timeout: 30 * time.Second, PortRange: 100}
}

// ConfigFrom reads the btl_tcp_* parameters from p and validates them together.
func ConfigFrom(p *mca.Set) (Config, error) {
	c := Config{
		IfInclude:   p.List("btl_tcp_if_include"),
		IfExclude:   p.List("btl_tcp_if_exclude"),
		EagerLimit:  int(p.Size("btl_tcp_eager_limit")),
		MaxSendSize: int(p.Size("btl_tcp_max_send_size")),
		Timeout:     time.Duration(p.Int("btl_tcp_timeout")) * time.Second,
		PortMin:     int(p.Int("btl_tcp_port_min")),
		PortRange:   int(p.Int("btl_tcp_port_range")),
	}
	return c, c.Validate()
}

// Validate checks the rules that tie parameters together.
func (c *Config) Validate() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("btl/tcp: "+format, a...) }
	switch {
	case c.MaxSendSize < 1 || c.MaxSendSize > 64<<20:
		return bad("btl_tcp_max_send_size=%d; allowed 1..%d", c.MaxSendSize, 64<<20)
	case c.EagerLimit < 0 || c.EagerLimit > c.MaxSendSize:
		return bad("btl_tcp_eager_limit=%d with btl_tcp_max_send_size=%d; allowed 0..btl_tcp_max_send_size", c.EagerLimit, c.MaxSendSize)
	case c.Timeout <= 0:
		return bad("btl_tcp_timeout=%v; allowed at least 1 s", c.Timeout)
	case c.PortMin < 0 || c.PortMin > 65535:
		return bad("btl_tcp_port_min=%d; allowed 0..65535", c.PortMin)
	case c.PortRange < 1 || (c.PortMin > 0 && c.PortMin+c.PortRange-1 > 65535):
		return bad("btl_tcp_port_min=%d with btl_tcp_port_range=%d goes past port 65535", c.PortMin, c.PortRange)
	case len(c.IfInclude) > 0 && len(c.IfExclude) > 0:
		return bad("btl_tcp_if_include=%v and btl_tcp_if_exclude=%v are both set; allowed: one of them", c.IfInclude, c.IfExclude)
	}
	if _, err := parseIfSpecs("btl_tcp_if_include", c.IfInclude); err != nil {
		return err
	}
	if _, err := parseIfSpecs("btl_tcp_if_exclude", c.IfExclude); err != nil {
		return err
	}
	return nil
}
