//go:build !unix && !js

package sqlite

import "time"

func processCPU() time.Duration { return 0 }
