<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The framing of the node bus, sans-I/O: a frame is a 4-byte big-endian length and that many bytes of body.
 * encode() makes one; feed() takes bytes as they arrive, in any split, and returns the bodies completed.
 * What a body holds is the bus's business (see Kiln\Store\RelayBus); the relay only moves whole frames.
 */
final class RelayFrames
{
    public const HEADER = 4;

    /**
     * The default bound on one body: a bus message of 16 MiB of payload with the longest channel name (65,535
     * bytes) and its 2-byte length, so that the bound users see is the payload's (Kiln\Store\Internal\BusMessage).
     */
    public const MAX_BODY = (16 << 20) + 2 + 65535;

    private string $buffer = '';

    /** Length of the body being read; -1 while its header is incomplete. */
    private int $need = -1;

    public function __construct(private readonly int $maxBody = self::MAX_BODY) {}

    public static function encode(string $body): string
    {
        return pack('N', \strlen($body)) . $body;
    }

    /**
     * @return list<string> the bodies completed by $bytes, in order
     * @throws ServerException for a frame longer than the bound (the stream cannot be trusted after it)
     */
    public function feed(string $bytes): array
    {
        $this->buffer .= $bytes;
        $bodies = [];
        $at = 0;
        $length = \strlen($this->buffer);
        while (true) {
            if ($this->need < 0) {
                if ($length - $at < self::HEADER) {
                    break;
                }
                $header = substr($this->buffer, $at, self::HEADER);
                $this->need = (\ord($header[0]) << 24) | (\ord($header[1]) << 16) | (\ord($header[2]) << 8) | \ord($header[3]);
                if ($this->need > $this->maxBody) {
                    $this->buffer = '';
                    throw new ServerException("A bus frame of {$this->need} bytes is over the bound of {$this->maxBody}");
                }
                $at += self::HEADER;
            }
            if ($length - $at < $this->need) {
                break;
            }
            $bodies[] = substr($this->buffer, $at, $this->need);
            $at += $this->need;
            $this->need = -1;
        }
        $this->buffer = $at === 0 ? $this->buffer : substr($this->buffer, $at);
        return $bodies;
    }

    /** Whether a frame is part-way (bytes held that do not make a whole frame yet). */
    public function isPartial(): bool
    {
        return $this->buffer !== '' || $this->need >= 0;
    }
}
