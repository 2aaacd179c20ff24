package pipeline

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FromEnv reads the PM_* knobs the magefile documents.
func FromEnv() (Config, error) {
	cfg := Config{
		Kernels:    list("PM_KERNELS"),
		Variants:   list("PM_VARIANTS"),
		Toolchains: list("PM_TOOLCHAINS"),
		SizeSet:    os.Getenv("PM_SIZE_SET"),
		Out:        os.Getenv("PM_OUT"),
		GPU:        os.Getenv("PM_GPU") == "1",
		Work:       os.Getenv("PM_WORK"),
		Scheduler:  os.Getenv("PM_SCHEDULER"),
		Cluster:    os.Getenv("PM_CLUSTER"),
	}
	var errs []string
	num := func(name string, dst *int) {
		if s := os.Getenv(name); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 {
				errs = append(errs, fmt.Sprintf("%s=%q: want a positive integer", name, s))
				return
			}
			*dst = v
		}
	}
	num("PM_REPS", &cfg.Reps)
	num("PM_WARMUP", &cfg.Warmup)
	num("PM_JOBS", &cfg.Jobs)
	num("PM_TIMEOUT", &cfg.Timeout)
	for _, s := range list("PM_SIZES") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 {
			errs = append(errs, fmt.Sprintf("PM_SIZES: %q is not a positive integer", s))
			continue
		}
		cfg.Sizes = append(cfg.Sizes, v)
	}
	if len(errs) > 0 {
		return cfg, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return cfg, nil
}

func list(name string) []string {
	s := strings.TrimSpace(os.Getenv(name))
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
