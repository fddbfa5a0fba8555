package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/redcon"
)

// FuzzSplitWhole: whatever splitWhole splits, redcon.ReadNextCommand
// parses as a whole request with the same arguments (bytes and
// capacities) and the same rest; and the requests it leaves to redcon
// include those cut short, with a signed, padded or overlong length, a
// payload not ended by CR LF, or no arguments.
func FuzzSplitWhole(f *testing.F) {
	for _, s := range []string{
		resp("XADD", "bench", "*", "sensor-id", "1234", "temperature", "19.8") + resp("PING"),
		resp("XRANGE", "bench", "-", "+", "COUNT", "10"),
		"*1\r\n$0\r\n\r\n",
		"*0\r\n",
		"*-1\r\n",
		"*1\r\n$-1\r\n",
		"*1\r\n$+4\r\nPING\r\n",
		"*1\r\n$04\r\nPING\r\n",
		"*01\r\n$4\r\nPING\r\n",
		"*1\r\n$4\r\nPINGxx",
		"*1\r\n$4\r\nPI",
		"*2\r\n$4\r\nPING\r\n",
		"*1\r\n$4\nPING\r\n",
		"*1\r\n$12345678901\r\n",
		"*1\r\n:4\r\nPING\r\n",
		"PING\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		args, end := splitWhole(b, nil)
		if end == 0 {
			return
		}
		complete, want, _, rest, err := redcon.ReadNextCommand(b, nil)
		require.NoError(t, err)
		require.True(t, complete)
		require.Equal(t, len(b)-len(rest), end)
		require.Equal(t, len(want), len(args))
		for i := range want {
			require.Equal(t, string(want[i]), string(args[i]))
			require.Equal(t, cap(want[i]), cap(args[i]))
		}
	})
}

// TestSplitWholeLeaves: the requests splitWhole leaves to redcon (it
// returns 0), so that redcon refuses them or waits for more, as before.
func TestSplitWholeLeaves(t *testing.T) {
	for _, s := range []string{
		"*0\r\n", "*-1\r\n", "*1\r\n$-1\r\n", "*1\r\n$+4\r\nPING\r\n", "*1\r\n$04\r\nPING\r\n",
		"*01\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPINGxx", "*1\r\n$4\r\nPI", "*2\r\n$4\r\nPING\r\n",
		"*1\r\n$4\nPING\r\n", "*1\r\n$12345678901\r\n", "*1\r\n:4\r\nPING\r\n", "PING\r\n", "*1\r", "*",
	} {
		_, end := splitWhole([]byte(s), nil)
		require.Zero(t, end, "%q", s)
	}
	args, end := splitWhole([]byte(resp("PING")+"*1\r\n"), nil)
	require.Equal(t, len(resp("PING")), end)
	require.Equal(t, []string{"PING"}, []string{string(args[0])})
}
