<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Sse\EventStream;
use Kiln\Http\Sse\Internal\Sink;

/** The client end of an EventStream in a test: what it was sent, as bytes. */
final class FakeSink implements Sink
{
    public string $bytes = '';

    private bool $open = true;

    public function __construct(private readonly EventStream $stream) {}

    public static function start(EventStream $stream): self
    {
        $sink = new self($stream);
        $stream->attach($sink);
        return $sink;
    }

    public function write(string $bytes): bool
    {
        if ($this->open) {
            $this->bytes .= $bytes;
        }
        return $this->open;
    }

    public function end(): void
    {
        $this->open = false;
        $this->stream->ended();
    }
}
