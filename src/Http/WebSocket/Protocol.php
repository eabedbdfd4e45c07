<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\WebSocket\Internal\CloseFrame;
use Kiln\Http\WebSocket\Internal\Utf8;

/**
 * The WebSocket protocol (RFC 6455) for one connection, server side, without I/O: feed() takes the bytes
 * the client sent, in pieces of any size, and returns what they mean; the encode*() methods make the frames
 * the server sends. permessage-deflate (RFC 7692) is applied both ways when the handshake negotiated it.
 *
 * feed() is resumable: an incomplete frame waits in the buffer for the next call. After a Close or a
 * ProtocolViolation it parses nothing more (returns []): the connection is ending. A frame header that
 * announces a message over the limit is refused at once, before its payload is buffered.
 *
 * The common case (small, unfragmented, masked data frames, one or several per read) costs one substr and
 * one string XOR against the repeated mask per frame, one UTF-8 check for text, and the Message.
 */
final class Protocol
{
    private string $buffer = '';

    /** Bytes the buffer must hold before the next frame can be parsed: feed() returns at once below it. */
    private int $need = 2;

    private bool $ended = false;

    /** Opcode of the message being reassembled from fragments (1 text, 2 binary), 0 between messages. */
    private int $messageOpcode = 0;

    private bool $messageCompressed = false;

    private string $fragments = '';

    /** The end of an uncompressed text message's last fragment that is not yet a whole character. */
    private string $utf8Tail = '';

    /**
     * Payload bytes of the incomplete uncompressed text frame at the head of the buffer that were already
     * checked as UTF-8 (so a long text fails at its first bad byte, before it is all received), and the
     * unfinished character they end with. -1 when no such frame is pending.
     */
    private int $textChecked = -1;

    private string $textTail = '';

    private readonly int $maxMessage;

    /** Compressed bytes may run a little past the message limit on incompressible data (stored blocks). */
    private readonly int $maxCompressed;

    public function __construct(
        WebSocketLimits $limits = new WebSocketLimits(),
        private readonly ?PerMessageDeflate $deflate = null,
    ) {
        $this->maxMessage = $limits->maxMessageBytes;
        $this->maxCompressed = $limits->maxMessageBytes + ($limits->maxMessageBytes >> 8) + 64;
    }

    /** @return list<Message|Ping|Pong|Close|ProtocolViolation> */
    public function feed(string $bytes): array
    {
        if ($this->ended) {
            return [];
        }
        if ($this->buffer === '') {
            $buffer = $bytes;
        } else {
            $this->buffer .= $bytes; // in place: the buffer is not shared between calls
            $buffer = $this->buffer;
            $this->buffer = '';
        }
        $length = \strlen($buffer);
        if ($length < $this->need && $this->textChecked < 0) {
            $this->buffer = $buffer;
            return [];
        }
        $events = [];
        $offset = 0;
        $this->need = 2;
        while ($length - $offset >= 2) {
            $b0 = \ord($buffer[$offset]);
            $b1 = \ord($buffer[$offset + 1]);
            $opcode = $b0 & 0x0F;
            $size = $b1 & 0x7F;
            if ($b1 < 0x80) {
                return $this->fail($events, 1002, 'client frame not masked');
            }
            if ($b0 & 0x70) {
                if ($b0 & 0x30) {
                    return $this->fail($events, 1002, 'RSV2 or RSV3 set');
                }
                if ($this->deflate === null || $opcode === 0 || $opcode >= 8) {
                    return $this->fail($events, 1002, $this->deflate === null ? 'RSV1 set without permessage-deflate' : 'RSV1 set on a continuation or control frame');
                }
            }
            if ($opcode >= 8) {
                if ($opcode > 10) {
                    return $this->fail($events, 1002, "reserved opcode $opcode");
                }
                if ($b0 < 0x80) {
                    return $this->fail($events, 1002, 'fragmented control frame');
                }
                if ($size > 125) {
                    return $this->fail($events, 1002, 'control frame over 125 bytes');
                }
            } elseif ($opcode === 0) {
                if ($this->messageOpcode === 0) {
                    return $this->fail($events, 1002, 'continuation frame without a message to continue');
                }
            } elseif ($opcode > 2) {
                return $this->fail($events, 1002, "reserved opcode $opcode");
            } elseif ($this->messageOpcode !== 0) {
                return $this->fail($events, 1002, 'new data frame before the fragmented message ended');
            }
            $head = 6;
            if ($size >= 126) {
                if ($size === 126) {
                    if ($length - $offset < 4) {
                        $this->need = 4;
                        break;
                    }
                    $size = (\ord($buffer[$offset + 2]) << 8) | \ord($buffer[$offset + 3]);
                    $head = 8;
                } else {
                    if ($length - $offset < 10) {
                        $this->need = 10;
                        break;
                    }
                    /** @var array{1: int} $long */
                    $long = unpack('J', $buffer, $offset + 2);
                    $size = $long[1];
                    if ($size < 0) {
                        return $this->fail($events, 1002, 'frame length with the most significant bit set');
                    }
                    $head = 14;
                }
            }
            // A single frame of 125 bytes or less is always within the limit (at least 125).
            if ($opcode < 8 && ($size > 125 || $this->messageOpcode !== 0)
                && \strlen($this->fragments) + $size > (($b0 & 0x40) || $this->messageCompressed ? $this->maxCompressed : $this->maxMessage)) {
                return $this->fail($events, 1009, "message over {$this->maxMessage} bytes");
            }
            $end = $offset + $head + $size;
            if ($end > $length) {
                $this->need = $head + $size;
                if (($opcode === 1 || ($opcode === 0 && $this->messageOpcode === 1 && !$this->messageCompressed)) && ($b0 & 0x40) === 0
                    && !$this->checkPartialText($buffer, $offset + $head, $length)) {
                    return $this->fail($events, 1007, 'text message is not valid UTF-8');
                }
                break;
            }
            if ($this->textChecked >= 0) {
                $this->textChecked = -1;
                $this->textTail = '';
            }
            $payload = $size === 0 ? '' : substr($buffer, $offset + $head, $size) ^ str_repeat(substr($buffer, $offset + $head - 4, 4), ($size >> 2) + 1);
            $offset = $end;
            if ($opcode !== 0 && $opcode < 8 && $b0 >= 0x80 && $b0 < 0xC0) {
                // Fast path: a whole uncompressed message in one frame.
                if ($opcode === 1 && preg_match('//u', $payload) !== 1) {
                    return $this->fail($events, 1007, 'text message is not valid UTF-8');
                }
                $events[] = new Message($payload, $opcode === 2);
                continue;
            }
            $event = $opcode >= 8 ? $this->control($opcode, $payload) : $this->fragment($b0, $opcode, $payload);
            if ($event === null) {
                continue;
            }
            $events[] = $event;
            if ($event instanceof Close || $event instanceof ProtocolViolation) {
                $this->end();
                return $events;
            }
        }
        if ($offset < $length) {
            $this->buffer = $offset === 0 ? $buffer : substr($buffer, $offset);
        }
        return $events;
    }

    /** One unmasked data frame holding the whole message; compressed when permessage-deflate was negotiated. */
    public function encodeMessage(string $payload, bool $binary): string
    {
        if (!$binary && preg_match('//u', $payload) !== 1) {
            throw new \ValueError('A text message must be valid UTF-8: send it as binary');
        }
        if ($this->deflate !== null) {
            return self::frame($binary ? 0xC2 : 0xC1, $this->deflate->compress($payload));
        }
        return self::frame($binary ? 0x82 : 0x81, $payload);
    }

    public function encodePing(string $payload = ''): string
    {
        return self::frame(0x89, self::controlPayload($payload));
    }

    public function encodePong(string $payload): string
    {
        return self::frame(0x8A, self::controlPayload($payload));
    }

    /**
     * A close frame. Code 1005 ("no code", as Close reports a bare close frame) makes a close frame without
     * payload, so a Close received can be echoed as it came.
     *
     * @throws \ValueError for a code one may not send, a reason over 123 bytes, or a reason not in UTF-8
     */
    public function encodeClose(int $code = 1000, string $reason = ''): string
    {
        return self::frame(0x88, CloseFrame::encode($code, $reason));
    }

    /** Whether feed() has seen the end (a Close or a ProtocolViolation) and will parse nothing more. */
    public function ended(): bool
    {
        return $this->ended;
    }

    private static function frame(int $b0, string $payload): string
    {
        $size = \strlen($payload);
        if ($size < 126) {
            return \chr($b0) . \chr($size) . $payload;
        }
        if ($size < 65536) {
            return \chr($b0) . "\x7E" . pack('n', $size) . $payload;
        }
        return \chr($b0) . "\x7F" . pack('J', $size) . $payload;
    }

    private static function controlPayload(string $payload): string
    {
        if (\strlen($payload) > 125) {
            throw new \ValueError('A ping or pong payload is at most 125 bytes, ' . \strlen($payload) . ' given');
        }
        return $payload;
    }

    /**
     * Checks the payload received so far of an incomplete text frame (starting at $start in $buffer, with
     * its mask in the 4 bytes before), from where the last call stopped. Returns false at invalid UTF-8.
     */
    private function checkPartialText(string $buffer, int $start, int $length): bool
    {
        if ($this->textChecked < 0) {
            $this->textChecked = 0;
            $this->textTail = $this->utf8Tail; // a continuation goes on from the message's earlier fragments
        }
        $done = $this->textChecked;
        $count = $length - $start - $done;
        if ($count <= 0) {
            return true;
        }
        $mask = substr($buffer, $start - 4, 4);
        if (($done & 3) !== 0) {
            $mask = substr($mask . $mask, $done & 3, 4);
        }
        $tail = Utf8::continue($this->textTail, substr($buffer, $start + $done, $count) ^ str_repeat($mask, ($count >> 2) + 1));
        if ($tail === null) {
            return false;
        }
        $this->textTail = $tail;
        $this->textChecked = $done + $count;
        return true;
    }

    private function control(int $opcode, string $payload): Ping|Pong|Close|ProtocolViolation
    {
        return match ($opcode) {
            9 => new Ping($payload),
            10 => new Pong($payload),
            default => CloseFrame::decode($payload),
        };
    }

    /** A data frame that is not a whole uncompressed message: a fragment, or a compressed message. */
    private function fragment(int $b0, int $opcode, string $payload): Message|ProtocolViolation|null
    {
        if ($opcode !== 0) {
            $this->messageOpcode = $opcode;
            $this->messageCompressed = ($b0 & 0x40) !== 0;
        }
        if ($this->messageOpcode === 1 && !$this->messageCompressed) {
            $tail = Utf8::continue($this->utf8Tail, $payload);
            if ($tail === null) {
                return new ProtocolViolation(1007, 'text message is not valid UTF-8');
            }
            $this->utf8Tail = $tail;
        }
        if ($b0 < 0x80) {
            $this->fragments .= $payload;
            return null;
        }
        $message = $this->fragments === '' ? $payload : $this->fragments . $payload;
        $binary = $this->messageOpcode === 2;
        $compressed = $this->messageCompressed;
        $incomplete = $this->utf8Tail !== '';
        $this->fragments = '';
        $this->utf8Tail = '';
        $this->messageOpcode = 0;
        $this->messageCompressed = false;
        if ($compressed) {
            return $this->inflate($message, $binary);
        }
        if ($incomplete) {
            return new ProtocolViolation(1007, 'text message ends inside a UTF-8 sequence');
        }
        return new Message($message, $binary);
    }

    private function inflate(string $compressed, bool $binary): Message|ProtocolViolation
    {
        \assert($this->deflate !== null);
        try {
            $message = $this->deflate->decompress($compressed, $this->maxMessage);
        } catch (InflateException $e) {
            return new ProtocolViolation($e->closeCode, $e->getMessage());
        }
        if (!$binary && !Utf8::isValid($message)) {
            return new ProtocolViolation(1007, 'text message is not valid UTF-8');
        }
        return new Message($message, $binary);
    }

    /**
     * @param list<Message|Ping|Pong|Close|ProtocolViolation> $events
     * @return list<Message|Ping|Pong|Close|ProtocolViolation>
     */
    private function fail(array $events, int $code, string $reason): array
    {
        $events[] = new ProtocolViolation($code, $reason);
        $this->end();
        return $events;
    }

    private function end(): void
    {
        $this->ended = true;
        $this->buffer = '';
        $this->fragments = '';
        $this->utf8Tail = '';
        $this->textChecked = -1;
        $this->textTail = '';
    }
}
