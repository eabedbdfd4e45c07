<?php

declare(strict_types=1);

namespace Kiln\Redis;

use Kiln\Redis\Internal\Greeting;
use Kiln\Redis\Resp\Attributed;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\Resp\RespEncoder;
use Kiln\Redis\Resp\RespParser;

/**
 * Redis for code that may block (the sequential tier, task workers, CLI scripts): the same codec,
 * greeting and failures as RedisClient, on a blocking socket, one command at a time, no loop needed.
 * One server, or the master named by Sentinels (asked again at each connect); not a Cluster. A lost
 * connection fails the command in flight (ConnectionLostException, never re-sent); the next command
 * connects again, at once (a blocking caller decides itself how long to wait between tries).
 *
 * Nobody reads the connection between commands, so a server that closed it meanwhile (it restarted, its
 * `timeout` passed, CLIENT KILL) is found before the next command is written, by a look that does not wait:
 * that command goes out on a new connection instead of failing on the old one. A close that comes after the
 * look still fails the command, as above.
 */
final class SyncRedisClient implements Commands
{
    /** @var resource|null */
    private mixed $stream = null;
    private RespParser $parser;
    /** The server talked to: the configured one, or the master the Sentinels named at the last connect. */
    private Endpoint $endpoint;

    public function __construct(private readonly RedisConfig $config)
    {
        if ($config->mode === RedisMode::Cluster) {
            throw new \ValueError('SyncRedisClient does not route a Cluster: use a redis://, rediss:// or redis+sentinel:// config');
        }
        $this->endpoint = $config->endpoints[0];
        $this->parser = new RespParser();
    }

    public static function fromUri(string $uri): self
    {
        return new self(RedisConfig::fromUri($uri));
    }

    /** @throws RedisException */
    public function command(string|int|float ...$args): mixed
    {
        $reply = $this->pipeline([array_values($args)])[0];
        if ($reply instanceof ErrorReply) {
            if ($reply->code() === 'READONLY' && $this->config->mode === RedisMode::Sentinel) {
                $this->close(); // a demoted master: ask the Sentinels again at the next command
            }
            throw new ErrorReplyException($reply);
        }

        return $reply;
    }

    /**
     * @param list<list<string|int|float>> $commands
     *
     * @return list<mixed> error replies as ErrorReply in their place
     */
    public function pipeline(array $commands): array
    {
        if ($commands === []) {
            return [];
        }
        $stream = $this->stream;
        if ($stream === null || !$this->stillOpen($stream)) {
            $stream = $this->connect();
        }

        return $this->exchange($stream, $commands);
    }

    public function close(): void
    {
        if ($this->stream !== null) {
            fclose($this->stream);
            $this->stream = null;
        }
    }

    /**
     * @param resource $stream
     * @param non-empty-list<list<string|int|float>> $commands
     *
     * @return list<mixed>
     */
    private function exchange(mixed $stream, array $commands): array
    {
        $out = '';
        foreach ($commands as $args) {
            $out .= RespEncoder::command($args);
        }
        $endpoint = (string) $this->endpoint;
        while ($out !== '') {
            $written = @fwrite($stream, $out);
            if ($written === false || $written === 0) {
                $this->lose("Writing to Redis at $endpoint failed");
            }
            $out = substr($out, $written);
        }
        $replies = [];
        while (\count($replies) < \count($commands)) {
            $data = @fread($stream, 262144);
            if ($data === false || $data === '') {
                $timedOut = stream_get_meta_data($stream)['timed_out'];
                $this->close();
                $this->parser = new RespParser();
                throw $timedOut
                    ? new CommandTimeoutException("Redis at $endpoint did not reply within {$this->config->commandTimeout} s")
                    : new ConnectionLostException("Redis at $endpoint closed the connection");
            }
            try {
                foreach ($this->parser->feed($data) as $value) {
                    $replies[] = $value instanceof Attributed ? $value->value : $value;
                }
            } catch (ProtocolException $e) {
                $this->lose("Redis at $endpoint sent malformed data: {$e->getMessage()}");
            }
        }

        return $replies;
    }

    /**
     * Whether the connection, idle since its last reply, can take a command: nothing is there to read. An end of
     * stream, or bytes nobody asked for (the connection is out of step), close it. The read does not block: a TLS
     * record that carries no data (a session ticket) leaves it open with nothing read.
     *
     * @param resource $stream
     */
    private function stillOpen(mixed $stream): bool
    {
        $read = [$stream];
        $none = null;
        if (@stream_select($read, $none, $none, 0) !== 1) {
            return true;
        }
        stream_set_blocking($stream, false);
        $data = @fread($stream, 65536);
        $ended = feof($stream);
        stream_set_blocking($stream, true);
        if ($data === '' && !$ended) {
            return true;
        }
        $this->close();
        $this->parser = new RespParser();

        return false;
    }

    /** Asks the Sentinels, in turn, where the master is. */
    private function master(): Endpoint
    {
        $problems = [];
        foreach ($this->config->endpoints as $sentinel) {
            $client = new self(new RedisConfig([$sentinel], password: $this->config->sentinelPassword, tls: $this->config->tls, verifyPeer: $this->config->verifyPeer, cafile: $this->config->cafile, connectTimeout: $this->config->connectTimeout, commandTimeout: $this->config->connectTimeout));
            try {
                $reply = $client->command('SENTINEL', 'get-master-addr-by-name', (string) $this->config->masterName);
            } catch (RedisException $e) {
                $problems[] = "$sentinel: {$e->getMessage()}";
                continue;
            } finally {
                $client->close();
            }
            if (\is_array($reply) && \is_string($reply[0] ?? null) && \is_string($reply[1] ?? null)) {
                return new Endpoint($reply[0], (int) $reply[1]);
            }
            $problems[] = "$sentinel: does not know master \"{$this->config->masterName}\"";
        }

        throw new ConnectException("No Sentinel named the master \"{$this->config->masterName}\": " . implode('; ', $problems));
    }

    private function lose(string $why): never
    {
        $this->close();
        $this->parser = new RespParser();
        throw new ConnectionLostException($why);
    }

    /** @return resource */
    private function connect(): mixed
    {
        $endpoint = $this->endpoint = $this->config->mode === RedisMode::Sentinel ? $this->master() : $this->config->endpoints[0];
        $context = stream_context_create(['socket' => ['tcp_nodelay' => true], 'ssl' => [
            'peer_name' => $endpoint->host,
            'verify_peer' => $this->config->verifyPeer,
            'verify_peer_name' => $this->config->verifyPeer,
        ] + ($this->config->cafile === null ? [] : ['cafile' => $this->config->cafile])]);
        $stream = @stream_socket_client($endpoint->uri(), $errno, $error, $this->config->connectTimeout, \STREAM_CLIENT_CONNECT, $context);
        if ($stream === false) {
            throw new ConnectException("Connecting to Redis at $endpoint failed: $error ($errno)");
        }
        stream_set_timeout($stream, (int) $this->config->commandTimeout, (int) (fmod($this->config->commandTimeout, 1.0) * 1e6));
        if ($this->config->tls && @stream_socket_enable_crypto($stream, true, \STREAM_CRYPTO_METHOD_TLS_CLIENT) !== true) {
            fclose($stream);
            throw new ConnectException("TLS handshake with Redis at $endpoint failed: " . (error_get_last()['message'] ?? 'unknown error'));
        }
        $this->parser = new RespParser();
        $greeting = Greeting::commands($this->config);
        if ($greeting !== []) {
            try {
                $problem = Greeting::problem($this->exchange($stream, $greeting));
            } catch (RedisException $e) {
                throw new ConnectException("Greeting Redis at $endpoint failed: {$e->getMessage()}", 0, $e);
            }
            if ($problem !== null) {
                fclose($stream);
                throw new ConnectException("Redis at $endpoint refused the connection: $problem");
            }
        }

        return $this->stream = $stream;
    }
}
