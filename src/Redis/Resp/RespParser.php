<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

use Kiln\Redis\ProtocolException;

/**
 * Sans-I/O RESP2 and RESP3 reader: bytes in, whole replies out, resumable at any byte.
 *
 * Replies map to PHP values: simple string and bulk to string, integer to int, null bulk, null array
 * and RESP3 null to null, array and set to list, map to an array keyed by its (scalar) keys, double to
 * float, boolean to bool; errors, big numbers, verbatim strings, pushes and attributes to the small
 * value classes of this namespace. Aggregates are built on a stack of open frames, so a reply of a
 * million elements that arrives in pieces is read once; only an element cut in two (a line, a bulk) is
 * read again from its first byte when the rest comes. A reply is never returned twice. After a
 * ProtocolException the parser stays failed: the stream is out of step and the connection has to go.
 */
final class RespParser
{
    private string $buffer = '';
    private int $offset = 0;
    private ?string $failure = null;
    private readonly object $incomplete;
    private readonly object $opened;
    /**
     * Aggregates still being read, innermost last: kind ('*' '~' '>' '%' '|' or 'a' for the value after
     * an attribute), elements still to come, elements so far, the attributes (for 'a').
     *
     * @var list<array{string, int, list<mixed>, array<int|string, mixed>}>
     */
    private array $frames = [];

    public function __construct(private readonly RespLimits $limits = new RespLimits())
    {
        $this->incomplete = new \stdClass();
        $this->opened = new \stdClass();
    }

    /**
     * @return list<mixed> the replies completed by $bytes, in order
     *
     * @throws ProtocolException
     */
    public function feed(string $bytes): array
    {
        if ($this->failure !== null) {
            throw new ProtocolException($this->failure);
        }
        $this->buffer .= $bytes;
        $values = [];
        $length = \strlen($this->buffer);
        try {
            while ($this->offset < $length) {
                $position = $this->offset;
                $value = $this->element($position);
                if ($value === $this->incomplete) {
                    break;
                }
                $this->offset = $position;
                if ($value === $this->opened) {
                    continue;
                }
                while (true) {
                    if ($this->frames === []) {
                        $values[] = $value;
                        break;
                    }
                    $value = $this->append($value);
                    if ($value === $this->incomplete) {
                        break;
                    }
                }
            }
        } catch (ProtocolException $e) {
            $this->failure = $e->getMessage();
            throw $e;
        }
        if ($this->offset === $length) {
            $this->buffer = '';
            $this->offset = 0;
        } elseif ($this->offset > 65536) {
            $this->buffer = substr($this->buffer, $this->offset);
            $this->offset = 0;
        }

        return $values;
    }

    /** Bytes received but not yet part of a whole reply (elements already read into open aggregates excluded). */
    public function buffered(): int
    {
        return \strlen($this->buffer) - $this->offset;
    }

    /** One element at $position: a whole scalar, the marker of an aggregate just opened, or incomplete. */
    private function element(int &$position): mixed
    {
        $type = $this->buffer[$position];
        $line = $this->line($position);
        if ($line === null) {
            return $this->incomplete;
        }

        return match ($type) {
            '+' => $line,
            '-' => new ErrorReply($line),
            ':' => $this->integer($line),
            '$' => $this->bulk($line, $position),
            '!' => \is_string($data = $this->bulk($line, $position)) ? new ErrorReply($data) : $data,
            '=' => \is_string($data = $this->bulk($line, $position)) ? self::verbatim($data) : $data,
            '*', '~', '>', '%', '|' => $this->open($type, $line),
            '_' => $line === '' ? null : throw new ProtocolException('A RESP3 null carries no data, got "' . self::show($line) . '"'),
            '#' => match ($line) {
                't' => true,
                'f' => false,
                default => throw new ProtocolException('A RESP3 boolean is "t" or "f", got "' . self::show($line) . '"'),
            },
            ',' => self::double($line),
            '(' => preg_match('/\A[-+]?[0-9]+\z/', $line) === 1 ? new BigNumber($line) : throw new ProtocolException('Malformed big number "' . self::show($line) . '"'),
            default => throw new ProtocolException(\sprintf('Unknown RESP type byte 0x%02x', \ord($type))),
        };
    }

    /** An aggregate header: pushes a frame (the opened marker), or is the whole value when empty or null. */
    private function open(string $type, string $line): mixed
    {
        $kind = match ($type) {
            '*' => 'array',
            '~' => 'set',
            '>' => 'push',
            default => 'map',
        };
        $count = $this->integer($line);
        if ($count === -1 && $type === '*') {
            return null;
        }
        if ($count < 0) {
            throw new ProtocolException("Negative $kind length $count");
        }
        if ($count > $this->limits->maxElements) {
            throw new ProtocolException("A $kind of $count elements is over the limit of {$this->limits->maxElements}");
        }
        if (\count($this->frames) + 1 > $this->limits->maxDepth) {
            throw new ProtocolException("Replies nested deeper than {$this->limits->maxDepth} levels");
        }
        if ($count === 0 && $type !== '|') {
            return $type === '>' ? new Push([]) : [];
        }
        $this->frames[] = [$type, $type === '%' || $type === '|' ? 2 * $count : $count, [], []];
        if ($count === 0) {
            $this->frames[\count($this->frames) - 1] = ['a', 1, [], []];
        }

        return $this->opened;
    }

    /** Adds a finished element to the innermost frame; returns the frame's value if that finished it too. */
    private function append(mixed $value): mixed
    {
        $top = \count($this->frames) - 1;
        $frame = &$this->frames[$top];
        $frame[2][] = $value;
        if (--$frame[1] > 0) {
            return $this->incomplete;
        }
        [$type, , $items, $attributes] = $frame;
        unset($frame);
        array_pop($this->frames);

        return match ($type) {
            '*', '~' => $items,
            '>' => new Push($items),
            '%' => self::pairs($items),
            '|' => $this->awaitAttributed(self::pairs($items)),
            default => new Attributed($attributes, $items[0]),
        };
    }

    /**
     * After an attribute's map, the value it belongs to is read in a frame of its own.
     *
     * @param array<int|string, mixed> $attributes
     */
    private function awaitAttributed(array $attributes): object
    {
        $this->frames[] = ['a', 1, [], $attributes];

        return $this->incomplete;
    }

    /**
     * @param list<mixed> $items key, value, key, value...
     *
     * @return array<int|string, mixed>
     */
    private static function pairs(array $items): array
    {
        $map = [];
        for ($i = 0, $n = \count($items); $i < $n; $i += 2) {
            $key = $items[$i];
            if (!\is_string($key) && !\is_int($key)) {
                throw new ProtocolException('A map key of type ' . get_debug_type($key) . ' is not supported (string and integer keys are)');
            }
            $map[$key] = $items[$i + 1];
        }

        return $map;
    }

    /** The rest of the line after the type byte, moving $position past its CRLF; null if incomplete. */
    private function line(int &$position): ?string
    {
        $end = strpos($this->buffer, "\r\n", $position + 1);
        $max = $this->limits->maxLineBytes;
        if ($end === false) {
            if (\strlen($this->buffer) - $position > $max) {
                throw new ProtocolException("A RESP line is longer than $max bytes");
            }

            return null;
        }
        if ($end - $position > $max) {
            throw new ProtocolException("A RESP line is longer than $max bytes");
        }
        $line = substr($this->buffer, $position + 1, $end - $position - 1);
        $position = $end + 2;

        return $line;
    }

    private function integer(string $line): int
    {
        $value = (int) $line;
        if ((string) $value !== $line) {
            throw new ProtocolException('Malformed or out-of-range RESP integer "' . self::show($line) . '"');
        }

        return $value;
    }

    /** The bulk's bytes, null for a null bulk, or the incomplete marker. */
    private function bulk(string $line, int &$position): mixed
    {
        $length = $this->integer($line);
        if ($length === -1) {
            return null;
        }
        if ($length < 0) {
            throw new ProtocolException("Negative bulk length $length");
        }
        if ($length > $this->limits->maxBulkBytes) {
            throw new ProtocolException("A bulk of $length bytes is over the limit of {$this->limits->maxBulkBytes}");
        }
        if (\strlen($this->buffer) < $position + $length + 2) {
            return $this->incomplete;
        }
        if (substr_compare($this->buffer, "\r\n", $position + $length, 2) !== 0) {
            throw new ProtocolException("A bulk of $length bytes is not followed by CRLF");
        }
        $data = substr($this->buffer, $position, $length);
        $position += $length + 2;

        return $data;
    }

    private static function verbatim(string $data): VerbatimString
    {
        if (\strlen($data) < 4 || $data[3] !== ':') {
            throw new ProtocolException('A verbatim string starts with a three-letter format and ":"');
        }

        return new VerbatimString(substr($data, 0, 3), substr($data, 4));
    }

    private static function double(string $line): float
    {
        return match (strtolower($line)) {
            'inf', '+inf' => \INF,
            '-inf' => -\INF,
            'nan', '-nan' => \NAN,
            default => is_numeric($line) && trim($line) === $line ? (float) $line : throw new ProtocolException('Malformed RESP3 double "' . self::show($line) . '"'),
        };
    }

    private static function show(string $bytes): string
    {
        return addcslashes(substr($bytes, 0, 40), "\0..\37\177..\377\"\\");
    }
}
