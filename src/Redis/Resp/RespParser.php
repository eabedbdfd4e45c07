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
 * value classes of this namespace. An incomplete reply is parsed again from its first byte when more
 * bytes come; a reply is never returned twice. After a ProtocolException the parser stays failed: the
 * stream is out of step and the connection has to go.
 */
final class RespParser
{
    private string $buffer = '';
    private int $offset = 0;
    private ?string $failure = null;
    private readonly object $incomplete;

    public function __construct(private readonly RespLimits $limits = new RespLimits())
    {
        $this->incomplete = new \stdClass();
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
                $value = $this->value($position, 0);
                if ($value === $this->incomplete) {
                    break;
                }
                $values[] = $value;
                $this->offset = $position;
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

    /** Bytes received but not yet part of a whole reply. */
    public function buffered(): int
    {
        return \strlen($this->buffer) - $this->offset;
    }

    private function value(int &$position, int $depth): mixed
    {
        if ($position >= \strlen($this->buffer)) {
            return $this->incomplete;
        }
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
            '*' => $this->aggregate($line, $position, $depth, 'array'),
            '~' => $this->aggregate($line, $position, $depth, 'set'),
            '>' => $this->aggregate($line, $position, $depth, 'push'),
            '%' => $this->aggregate($line, $position, $depth, 'map'),
            '|' => $this->attributed($line, $position, $depth),
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

    private function aggregate(string $line, int &$position, int $depth, string $kind): mixed
    {
        $count = $this->integer($line);
        if ($count === -1 && $kind === 'array') {
            return null;
        }
        if ($count < 0) {
            throw new ProtocolException("Negative $kind length $count");
        }
        if ($count > $this->limits->maxElements) {
            throw new ProtocolException("A $kind of $count elements is over the limit of {$this->limits->maxElements}");
        }
        if ($depth + 1 > $this->limits->maxDepth) {
            throw new ProtocolException("Replies nested deeper than {$this->limits->maxDepth} levels");
        }
        if ($kind === 'map') {
            return $this->map($count, $position, $depth);
        }
        $items = [];
        for ($i = 0; $i < $count; $i++) {
            $item = $this->value($position, $depth + 1);
            if ($item === $this->incomplete) {
                return $this->incomplete;
            }
            $items[] = $item;
        }

        return $kind === 'push' ? new Push($items) : $items;
    }

    private function map(int $pairs, int &$position, int $depth): mixed
    {
        $map = [];
        for ($i = 0; $i < $pairs; $i++) {
            $key = $this->value($position, $depth + 1);
            if ($key === $this->incomplete) {
                return $this->incomplete;
            }
            $value = $this->value($position, $depth + 1);
            if ($value === $this->incomplete) {
                return $this->incomplete;
            }
            if (!\is_string($key) && !\is_int($key)) {
                throw new ProtocolException('A map key of type ' . get_debug_type($key) . ' is not supported (string and integer keys are)');
            }
            $map[$key] = $value;
        }

        return $map;
    }

    private function attributed(string $line, int &$position, int $depth): mixed
    {
        $attributes = $this->aggregate($line, $position, $depth, 'map');
        if ($attributes === $this->incomplete) {
            return $this->incomplete;
        }
        $value = $this->value($position, $depth);
        if ($value === $this->incomplete) {
            return $this->incomplete;
        }
        \assert(\is_array($attributes));

        return new Attributed($attributes, $value);
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
