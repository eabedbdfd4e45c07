<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Server\RelayFrames;
use Kiln\Server\ServerException;
use Kiln\Store\BusException;

/**
 * A script's blocking connection to its worker's BusGateway (a php-cgi or forked child is a process of its
 * own: waiting for the answer blocks nobody else). Each publish() returns once the worker published.
 *
 * @internal
 */
final class GatewayClient
{
    private readonly RelayFrames $frames;

    /** @param resource $stream */
    private function __construct(private readonly mixed $stream, private readonly float $timeout)
    {
        $this->frames = new RelayFrames(1 << 20);
    }

    /** @throws BusException when the gateway cannot be reached */
    public static function connect(string $socket, string $token, float $timeout = 5.0): self
    {
        $stream = @stream_socket_client('unix://' . $socket, $errno, $error, $timeout);
        if ($stream === false) {
            throw new BusException("Cannot reach the worker's bus gateway at $socket: $error");
        }
        $client = new self($stream, $timeout);
        $client->write(RelayFrames::encode($token));
        return $client;
    }

    /** @throws BusException when the worker did not publish it (the reason), or did not answer */
    public function publish(string $channel, string $payload): void
    {
        $this->write(RelayFrames::encode(BusMessage::encode($channel, $payload)));
        $answer = $this->answer();
        if ($answer !== '') {
            throw new BusException($answer);
        }
    }

    public function close(): void
    {
        @fclose($this->stream);
    }

    private function write(string $data): void
    {
        $deadline = microtime(true) + $this->timeout;
        while ($data !== '') {
            $left = $deadline - microtime(true);
            stream_set_timeout($this->stream, (int) max(0, $left), (int) (fmod(max(0, $left), 1.0) * 1e6));
            $written = @fwrite($this->stream, $data);
            if ($written === false || ($written === 0 && microtime(true) >= $deadline)) {
                throw new BusException('The bus gateway closed the connection or did not take the message in time: it was not published');
            }
            $data = (string) substr($data, $written);
        }
    }

    private function answer(): string
    {
        $deadline = microtime(true) + $this->timeout;
        while (true) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new BusException("The bus gateway did not answer within {$this->timeout} s: the message may or may not be published");
            }
            stream_set_timeout($this->stream, (int) $left, (int) (fmod($left, 1.0) * 1e6));
            $data = @fread($this->stream, 8192);
            if ($data === false || ($data === '' && feof($this->stream))) {
                throw new BusException('The bus gateway closed the connection (a wrong token?): the message was not published');
            }
            try {
                $answers = $this->frames->feed($data);
            } catch (ServerException $e) {
                throw new BusException("The bus gateway's answer is malformed: {$e->getMessage()}", 0, $e);
            }
            if ($answers !== []) {
                return $answers[0];
            }
        }
    }
}
