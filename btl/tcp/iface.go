package tcp

import (
	"fmt"
	"net"
	"strings"
)

// ifSpec is one item of btl_tcp_if_include/exclude: an interface name or a
// CIDR subnet.
type ifSpec struct {
	name string
	net  *net.IPNet
}

func parseIfSpecs(param string, items []string) ([]ifSpec, error) {
	var out []ifSpec
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		if strings.Contains(it, "/") {
			_, n, err := net.ParseCIDR(it)
			if err != nil {
				return nil, fmt.Errorf("btl/tcp: %s item %q is not a CIDR subnet (like 10.0.0.0/8): %v", param, it, err)
			}
			out = append(out, ifSpec{net: n})
			continue
		}
		if len(it) > 15 || strings.ContainsAny(it, " \t:") {
			return nil, fmt.Errorf("btl/tcp: %s item %q is neither an interface name (≤ 15 characters) nor a CIDR subnet", param, it)
		}
		out = append(out, ifSpec{name: it})
	}
	return out, nil
}

func (s ifSpec) match(ifname string, ip net.IP) bool {
	if s.net != nil {
		return s.net.Contains(ip)
	}
	return s.name == ifname
}

// ifAddr is one IPv4 address of one interface.
type ifAddr struct {
	name     string
	ip       net.IP
	loopback bool
}

// systemAddrs lists the IPv4 addresses of the interfaces that are up.
func systemAddrs() ([]ifAddr, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("btl/tcp: listing network interfaces: %w", err)
	}
	var out []ifAddr
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.To4() == nil {
				continue
			}
			out = append(out, ifAddr{name: ifc.Name, ip: n.IP.To4(), loopback: ifc.Flags&net.FlagLoopback != 0 || n.IP.IsLoopback()})
		}
	}
	return out, nil
}

// pickAddr chooses the address to listen on from avail: with loopback
// allowed and no include list, 127.0.0.1; else the first address that the
// include list names (or that the exclude list does not), loopback only
// when the include list names it.
func pickAddr(cfg Config, avail []ifAddr) (net.IP, error) {
	inc, err := parseIfSpecs("btl_tcp_if_include", cfg.IfInclude)
	if err != nil {
		return nil, err
	}
	exc, err := parseIfSpecs("btl_tcp_if_exclude", cfg.IfExclude)
	if err != nil {
		return nil, err
	}
	if cfg.Loopback && len(inc) == 0 {
		return net.IPv4(127, 0, 0, 1).To4(), nil
	}
	var seen []string
	for _, a := range avail {
		seen = append(seen, a.name+"="+a.ip.String())
		if len(inc) > 0 {
			for _, s := range inc {
				if s.match(a.name, a.ip) {
					return a.ip, nil
				}
			}
			continue
		}
		if a.loopback {
			continue
		}
		excluded := false
		for _, s := range exc {
			if s.match(a.name, a.ip) {
				excluded = true
			}
		}
		if !excluded {
			return a.ip, nil
		}
	}
	return nil, fmt.Errorf("btl/tcp: no IPv4 interface is usable (btl_tcp_if_include=%q, btl_tcp_if_exclude=%q, loopback excluded unless named or every rank is on one machine); interfaces up: %s",
		strings.Join(cfg.IfInclude, ","), strings.Join(cfg.IfExclude, ","), strings.Join(seen, ", "))
}
