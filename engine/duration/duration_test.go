package duration

import (
	"testing"
	"time"
)

func TestAgesReadAsKubectlShowsThem(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-5 * time.Second: "<invalid>", 0: "0s", 119 * time.Second: "119s", 150 * time.Second: "2m30s",
		10 * time.Minute: "10m", 3*time.Hour + 5*time.Minute: "3h5m", 30 * time.Hour: "30h",
		50 * time.Hour: "2d2h", 30 * 24 * time.Hour: "30d", 3 * 365 * 24 * time.Hour: "3y",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("%v: got %s, want %s", d, got, want)
		}
	}
}
