package hooks

import (
	"bytes"
	"fmt"
	"os"
)

// tempInputFile is inputFile as an unlinked temporary file.
func tempInputFile(data []byte) (*os.File, error) {
	f, err := os.CreateTemp("", "scv-hook-*.json")
	if err != nil {
		return nil, fmt.Errorf("the event's input file: %w", err)
	}
	_ = os.Remove(f.Name())
	if err := fill(f, data); err != nil {
		f.Close()
		return nil, fmt.Errorf("the event's input file: %w", err)
	}
	return f, nil
}

// fill writes data to the empty file f and rewinds it.
func fill(f *os.File, data []byte) error {
	if _, err := bytes.NewReader(data).WriteTo(f); err != nil {
		return err
	}
	_, err := f.Seek(0, 0)
	return err
}
