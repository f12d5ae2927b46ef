#include "textflag.h"

// func Pause()
TEXT ·Pause(SB), NOSPLIT, $0-0
	PAUSE
	RET
