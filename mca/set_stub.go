package mca

// Stub of the Set API; replaced by the implementation.

import "github.com/hashicorp/go-hclog"

// Set is a resolved set of parameter values. Getters panic on a name that
// was never registered or has another type (a programmer error).
type Set struct{}

func (s *Set) Int(name string) int64                    { panic("stub") }
func (s *Set) Size(name string) int64                   { panic("stub") }
func (s *Set) Bool(name string) bool                    { panic("stub") }
func (s *Set) String(name string) string                { panic("stub") }
func (s *Set) List(name string) []string                { panic("stub") }
func (s *Set) Selected(selector, component string) bool { panic("stub") }
func (s *Set) Source(name string) string                { panic("stub") }

func Register(component string, table []Param)     {}
func Defaults() *Set                               { return &Set{} }
func Load() (*Set, []string, error)                { return &Set{}, nil, nil }
func Logger(s *Set, framework string) hclog.Logger { return hclog.NewNullLogger() }
