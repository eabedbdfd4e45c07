<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql;

use Kiln\Db\ConnectionException;
use Kiln\Db\Connector;
use Kiln\Db\Dsn;
use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\Event\ServerError;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;
use Kiln\Loop\TimeoutCancellation;

use function Kiln\Loop\write;

/**
 * Opens MySQL/MariaDB connections on the loop: a non-blocking TCP or unix socket connect, then the
 * handshake through MysqlCodec. Over a unix socket the channel counts as secure (caching_sha2_password
 * may then send the password); over TCP it never is (TLS is not implemented).
 */
final class MysqlConnector implements Connector
{
    public function __construct(private readonly Dsn $dsn) {}

    public function connect(?Cancellation $cancellation = null): MysqlConnection
    {
        $dsn = $this->dsn;
        $timeout = new TimeoutCancellation((float) $dsn->option('connect_timeout', '10'), 'connect timeout');
        $until = $cancellation === null ? $timeout : new CompositeCancellation($cancellation, $timeout);
        $address = $dsn->socket !== null ? "unix://{$dsn->socket}" : "tcp://{$dsn->host}:{$dsn->port}";
        $socket = @stream_socket_client($address, $code, $message, 0, STREAM_CLIENT_CONNECT | STREAM_CLIENT_ASYNC_CONNECT);
        if ($socket === false) {
            throw new ConnectionException($this->failure(\is_string($message) && $message !== '' ? $message : 'error ' . (int) $code));
        }
        stream_set_blocking($socket, false);
        $codec = new MysqlCodec($dsn->user, $dsn->password(), $dsn->database, secure: $dsn->socket !== null);
        try {
            awaitWritable($socket, $until);
            if (stream_socket_get_name($socket, true) === false) {
                throw new ConnectionException($this->failure('connection refused'));
            }
            while (true) {
                $event = $codec->next();
                $out = $codec->output();
                if ($out !== '') {
                    write($socket, $out, $until);
                }
                if ($event instanceof Ready) {
                    if ($dsn->socket === null && \function_exists('socket_import_stream')) {
                        $raw = @socket_import_stream($socket);
                        if ($raw !== false) {
                            @socket_set_option($raw, SOL_TCP, TCP_NODELAY, 1);
                        }
                    }

                    return new MysqlConnection($socket, $codec, $dsn->redacted());
                }
                if ($event instanceof ServerError) {
                    throw new ConnectionException($this->failure("[$event->sqlState] $event->message"));
                }
                if ($event !== null) {
                    throw new MysqlProtocolException('Unexpected ' . $event::class . ' during the handshake');
                }
                $bytes = @fread($socket, 65536);
                if ($bytes === false || ($bytes === '' && feof($socket))) {
                    throw new ConnectionException($this->failure('the server closed the connection during the handshake'));
                }
                $bytes === '' ? awaitReadable($socket, $until) : $codec->feed($bytes);
            }
        } catch (\Throwable $e) {
            @fclose($socket);
            if ($e instanceof CancelledException && $timeout->isRequested() && !($cancellation?->isRequested() ?? false)) {
                throw new ConnectionException($this->failure('no answer within connect_timeout'), 0, $e);
            }
            if ($e instanceof MysqlProtocolException) {
                throw new ConnectionException($this->failure($e->getMessage()), 0, $e);
            }
            throw $e;
        }
    }

    public function describe(): string
    {
        return $this->dsn->redacted();
    }

    private function failure(string $why): string
    {
        return "Cannot connect to {$this->dsn->redacted()}: $why";
    }
}
