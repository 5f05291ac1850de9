//go:build race

package lockorder

import "testing"

func enabled() bool { return testing.Testing() }
