<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Internal;

use Kiln\Db\Mysql\MysqlProtocolException;

/**
 * The packet layer: a 3-byte length, a sequence id, the payload. Payloads of 16 MiB - 1 bytes continue in the next
 * packet; one sequence counter runs across both directions and starts again at 0 with each command.
 *
 * @internal
 */
final class Framing
{
    private string $input = '';
    /** How much of $input is consumed */
    private int $offset = 0;
    private string $partial = '';
    private string $output = '';
    private int $sequence = 0;

    public function feed(string $bytes): void
    {
        $this->input .= $bytes;
    }

    /** The bytes to send now (taken). */
    public function output(): string
    {
        [$out, $this->output] = [$this->output, ''];

        return $out;
    }

    /** A new command: its first packet has sequence id 0. */
    public function restart(): void
    {
        $this->sequence = 0;
    }

    public function send(string $payload): void
    {
        [$bytes, $this->sequence] = Wire::packets($payload, $this->sequence);
        $this->output .= $bytes;
    }

    /**
     * The next whole payload (parts of a split one joined), or null until more bytes come.
     *
     * @throws MysqlProtocolException on a sequence id out of order
     */
    public function next(): ?string
    {
        while (\strlen($this->input) - $this->offset >= 4) {
            $length = Reader::int('V', substr($this->input, $this->offset, 3) . "\0");
            if (\strlen($this->input) - $this->offset < 4 + $length) {
                break;
            }
            $sequence = \ord($this->input[$this->offset + 3]);
            if ($sequence !== $this->sequence) {
                throw new MysqlProtocolException("Packet out of order: sequence id $sequence, expected {$this->sequence}");
            }
            $this->sequence = ($sequence + 1) & 0xFF;
            $this->partial .= substr($this->input, $this->offset + 4, $length);
            $this->offset += 4 + $length;
            if ($length < Wire::MAX_PAYLOAD) {
                [$payload, $this->partial] = [$this->partial, ''];
                $this->compact();

                return $payload;
            }
        }
        $this->compact();

        return null;
    }

    /** Drops consumed input now and then, not after every packet (that would copy the buffer once per row). */
    private function compact(): void
    {
        if ($this->offset === \strlen($this->input)) {
            [$this->input, $this->offset] = ['', 0];
        } elseif ($this->offset > 65536) {
            [$this->input, $this->offset] = [substr($this->input, $this->offset), 0];
        }
    }
}
