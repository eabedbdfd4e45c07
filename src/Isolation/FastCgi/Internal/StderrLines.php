<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

/**
 * Cuts a STDERR stream into lines (without "\n" or "\r\n") for a callback; a line longer than $maxLength is
 * delivered in pieces so that a responder cannot make the client buffer without limit.
 *
 * @internal
 */
final class StderrLines
{
    private string $partial = '';

    /** @param (\Closure(string): void)|null $sink null: STDERR is dropped */
    public function __construct(
        private readonly ?\Closure $sink,
        private readonly int $maxLength = 8192,
    ) {}

    public function push(string $bytes): void
    {
        if ($this->sink === null) {
            return;
        }
        $this->partial .= $bytes;
        while (($lf = \strpos($this->partial, "\n")) !== false) {
            $line = \substr($this->partial, 0, $lf);
            $this->partial = (string) \substr($this->partial, $lf + 1);
            $this->emit(\str_ends_with($line, "\r") ? \substr($line, 0, -1) : $line);
        }
        while (\strlen($this->partial) > $this->maxLength) {
            $this->emit(\substr($this->partial, 0, $this->maxLength));
            $this->partial = (string) \substr($this->partial, $this->maxLength);
        }
    }

    /** The stream ended: a last line without "\n" is delivered too. */
    public function flush(): void
    {
        if ($this->partial !== '') {
            $line = $this->partial;
            $this->partial = '';
            $this->emit($line);
        }
    }

    private function emit(string $line): void
    {
        if ($this->sink !== null) {
            ($this->sink)($line);
        }
    }
}
