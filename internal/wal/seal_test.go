package wal

import (
	"bytes"
	"testing"
)

func TestSealFramesMatchesEndFrame(t *testing.T) {
	var sealed, direct []byte
	for i, p := range [][]byte{{}, []byte("a"), bytes.Repeat([]byte("xyz"), 1000), {0, 0, 0}} {
		d, start := BeginFrame(sealed)
		sealed = EndFrameLen(append(d, p...), start)
		direct = AppendFrame(direct, p)
		if i == 1 {
			SealFrames(sealed) // sealing twice changes nothing
		}
	}
	SealFrames(sealed)
	if !bytes.Equal(sealed, direct) {
		t.Fatalf("sealed frames differ from EndFrame's")
	}
	if _, _, err := DecodeFrame(sealed); err != nil {
		t.Fatal(err)
	}
}
