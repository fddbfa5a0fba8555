package kinesis

import (
	"encoding/binary"
	"hash/crc32"
)

// The AWS event-stream encoding of SubscribeToShard's response: a
// sequence of messages, each
//
//	total length (4) | headers length (4) | CRC-32 of the 8 bytes before (4) |
//	headers | payload | CRC-32 of all before (4)
//
// big-endian, CRC-32 of IEEE, each header a name (1-byte length), the
// type 7 (string) and a value (2-byte length).

type header struct{ name, value string }

// appendMessage appends one message with the given headers and payload.
func appendMessage(b []byte, headers []header, payload []byte) []byte {
	hlen := 0
	for _, h := range headers {
		hlen += 1 + len(h.name) + 1 + 2 + len(h.value)
	}
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, uint32(12+hlen+len(payload)+4))
	b = binary.BigEndian.AppendUint32(b, uint32(hlen))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	for _, h := range headers {
		b = append(b, byte(len(h.name)))
		b = append(b, h.name...)
		b = append(b, 7)
		b = binary.BigEndian.AppendUint16(b, uint16(len(h.value)))
		b = append(b, h.value...)
	}
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// appendEvent appends an event message of type eventType.
func appendEvent(b []byte, enc, eventType string, payload []byte) []byte {
	return appendMessage(b, []header{{":message-type", "event"}, {":event-type", eventType}, {":content-type", enc}}, payload)
}

// appendException appends an exception message, as Kinesis ends a
// subscription that fails.
func appendException(b []byte, enc string, e *apiError) []byte {
	body, _ := encodeBody(enc, errorBody{e.Type, e.Message})
	return appendMessage(b, []header{{":message-type", "exception"}, {":exception-type", e.Type}, {":content-type", enc}}, body)
}
