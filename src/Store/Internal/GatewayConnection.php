<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Loop\Loop;
use Kiln\Server\RelayFrames;
use Kiln\Server\ServerException;
use Kiln\Server\WriteQueue;

/**
 * One script's connection to a BusGateway: reads frames, hands them to the gateway, writes its answers.
 *
 * @internal
 */
final class GatewayConnection
{
    /** Answers waiting for a client that does not read them, at most. */
    private const ANSWERS_LIMIT = 1 << 20;

    /** The token was checked. */
    public bool $trusted = false;

    private readonly RelayFrames $frames;

    private readonly WriteQueue $answers;

    private ?string $reader;

    private ?string $writer = null;

    /**
     * @param resource $stream
     * @param \Closure(self, list<string>): (list<string>|null) $onFrames the answers to write, null to close
     * @param \Closure(): void $onClose
     */
    public function __construct(
        private readonly mixed $stream,
        int $maxBody,
        private readonly \Closure $onFrames,
        private readonly \Closure $onClose,
    ) {
        stream_set_blocking($stream, false);
        $this->frames = new RelayFrames($maxBody);
        $this->answers = new WriteQueue(self::ANSWERS_LIMIT);
        $this->reader = Loop::onReadable($stream, $this->read(...));
        Loop::unreference($this->reader);
    }

    public function close(): void
    {
        foreach ([$this->reader, $this->writer] as $id) {
            $id !== null && Loop::cancel($id);
        }
        $this->reader = $this->writer = null;
        @fclose($this->stream);
        ($this->onClose)();
    }

    private function read(): void
    {
        $data = @fread($this->stream, 262144);
        if ($data === false || ($data === '' && feof($this->stream))) {
            $this->close();
            return;
        }
        try {
            $bodies = $this->frames->feed($data);
        } catch (ServerException) {
            $this->close();
            return;
        }
        if ($bodies === []) {
            return;
        }
        $answers = ($this->onFrames)($this, $bodies);
        if ($answers === null) {
            $this->close();
            return;
        }
        foreach ($answers as $answer) {
            if (!$this->answers->push(RelayFrames::encode($answer))) {
                $this->close(); // a client that publishes without reading its answers
                return;
            }
        }
        $this->write();
    }

    private function write(): void
    {
        if ($this->reader === null) {
            return;
        }
        if (!$this->answers->writeTo($this->stream)) {
            $this->close();
            return;
        }
        if ($this->answers->isEmpty() && $this->writer !== null) {
            Loop::cancel($this->writer);
            $this->writer = null;
        } elseif (!$this->answers->isEmpty() && $this->writer === null) {
            $this->writer = Loop::onWritable($this->stream, fn() => $this->write());
            Loop::unreference($this->writer);
        }
    }
}
