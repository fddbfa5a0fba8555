//go:build !linux

package server

import "errors"

func limitFileSize(n int64) error { return errors.New("file size limits are set on Linux only") }

func limitOpenFiles(n uint64) error { return errors.New("open file limits are set on Linux only") }
