package tests

import (
	"fmt"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

func sscan(s, format string, args ...any) (int, error) { return fmt.Sscanf(s, format, args...) }
