package xstream

import (
	"errors"
	"math/big"
	"testing"
)

// FuzzParseHashKey checks ParseHashKey against math/big: it accepts exactly
// the plain decimal numbers below 2^128 without leading zeros, and String
// gives them back.
func FuzzParseHashKey(f *testing.F) {
	for _, s := range []string{"0", "1", "18446744073709551616", "340282366920938463463374607431768211455",
		"340282366920938463463374607431768211456", "", "-1", "+1", "1e3", "00012", " 7"} {
		f.Add(s)
	}
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHashKey(s)
		want, ok := new(big.Int).SetString(s, 10)
		valid := ok && want.Sign() >= 0 && want.Cmp(limit) < 0 && (s == "0" || s[0] != '0')
		for i := 0; valid && i < len(s); i++ {
			valid = s[i] >= '0' && s[i] <= '9'
		}
		if !valid {
			if err == nil || !errors.Is(err, ErrInvalidHashKey) {
				t.Fatalf("ParseHashKey(%q) = %v, %v; want ErrInvalidHashKey", s, h, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseHashKey(%q): %v", s, err)
		}
		if bigOf(h).Cmp(want) != 0 {
			t.Fatalf("ParseHashKey(%q) = %s, want %s", s, h, want)
		}
		if h.String() != want.String() {
			t.Fatalf("String of %q = %s, want %s", s, h, want)
		}
	})
}
