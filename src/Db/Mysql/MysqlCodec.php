<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql;

use Kiln\Db\Mysql\Event\Done;
use Kiln\Db\Mysql\Event\Prepared;
use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\Event\ResultSet;
use Kiln\Db\Mysql\Event\Row;
use Kiln\Db\Mysql\Event\ServerError;
use Kiln\Db\Mysql\Internal\CodecState;
use Kiln\Db\Mysql\Internal\Framing;
use Kiln\Db\Mysql\Internal\Handshake;
use Kiln\Db\Mysql\Internal\Reader;

/**
 * The client side of the MySQL/MariaDB protocol, without I/O: feed() the server's bytes, take what to send
 * from output(), and read what happened from next(), one event at a time (Ready, ResultSet, Row, Done,
 * Prepared, ServerError), so a large result set is never held whole. Commands (query(), prepare(),
 * execute(), closeStatement(), quit()) are accepted only when the previous one is finished.
 *
 * Packets of 16 MiB and more arrive split; sequence ids are checked. Result sets end in EOF packets
 * (CLIENT_DEPRECATE_EOF is not asked for); several results (multi-statements, CALL) follow one another,
 * each ending in a Done with $moreResults.
 */
final class MysqlCodec
{
    public const SERVER_STATUS_IN_TRANS = 0x0001;
    public const SERVER_MORE_RESULTS_EXISTS = 0x0008;

    private CodecState $state = CodecState::Greeting;
    private readonly Framing $framing;
    private int $status = 0;
    private readonly Handshake $handshake;
    /** @var list<Column> */
    private array $columns = [];
    private int $expected = 0;
    private bool $binary = false;
    /** The statement being prepared: set from COM_STMT_PREPARE's answer on (id -1 until then) */
    private ?Prepared $preparing = null;
    private int $paramsLeft = 0;
    private int $columnsLeft = 0;

    public function __construct(
        string $user,
        #[\SensitiveParameter]
        string $password,
        string $database,
        bool $secure = false,
    ) {
        $this->handshake = new Handshake($user, $password, $database, $secure);
        $this->framing = new Framing();
    }

    public function feed(string $bytes): void
    {
        $this->framing->feed($bytes);
    }

    /** The bytes to send now (taken: a second call returns only what came since). */
    public function output(): string
    {
        return $this->framing->output();
    }

    /**
     * The next event, or null until more bytes are fed.
     *
     * @throws MysqlProtocolException
     */
    public function next(): Ready|ResultSet|Row|Done|Prepared|ServerError|null
    {
        while (($payload = $this->framing->next()) !== null) {
            $event = $this->handle($payload);
            if ($event !== null) {
                return $event;
            }
        }

        return null;
    }

    /**
     * The error packet that $bytes, read from a connection the server then closed, begin with (its sequence id
     * not checked: a packet refused for its size is answered with 0), or null.
     */
    public static function parting(string $bytes): ?ServerError
    {
        if (\strlen($bytes) < 5) {
            return null;
        }
        $payload = substr($bytes, 4, Reader::int('V', substr($bytes, 0, 3) . "\0"));
        try {
            return ($payload[0] ?? '') === "\xFF" ? self::error($payload) : null;
        } catch (MysqlProtocolException) {
            return null;
        }
    }

    public function isReady(): bool
    {
        return $this->state === CodecState::Ready;
    }

    public function inTransaction(): bool
    {
        return ($this->status & self::SERVER_STATUS_IN_TRANS) !== 0;
    }

    public function query(string $sql): void
    {
        $this->command("\x03" . $sql, CodecState::ResponseHeader, false);
    }

    public function prepare(string $sql): void
    {
        $this->command("\x16" . $sql, CodecState::ResponseHeader, false);
        $this->preparing = new Prepared(-1, 0, []);
    }

    /** @param list<mixed> $params */
    public function execute(int $statementId, array $params): void
    {
        $payload = "\x17" . pack('V', $statementId) . "\x00" . pack('V', 1);
        if ($params !== []) {
            $nulls = str_repeat("\0", intdiv(\count($params) + 7, 8));
            $types = '';
            $values = '';
            foreach (array_values($params) as $i => $value) {
                if ($value === null) {
                    $nulls[$i >> 3] = \chr(\ord($nulls[$i >> 3]) | (1 << ($i & 7)));
                }
                [$type, $bytes] = MysqlTypes::param($value);
                $types .= $type;
                $values .= $bytes;
            }
            $payload .= $nulls . "\x01" . $types . $values;
        }
        $this->command($payload, CodecState::ResponseHeader, true);
    }

    public function closeStatement(int $statementId): void
    {
        $this->command("\x19" . pack('V', $statementId), CodecState::Ready, false);
    }

    public function quit(): void
    {
        $this->command("\x01", CodecState::Closed, false);
    }

    private function command(string $payload, CodecState $next, bool $binary): void
    {
        if ($this->state !== CodecState::Ready) {
            throw new \Error('A MySQL command was sent before the previous one finished (state ' . $this->state->name . ')');
        }
        $this->framing->restart();
        $this->framing->send($payload);
        $this->state = $next;
        $this->binary = $binary;
        $this->preparing = null;
    }

    private function handle(string $payload): Ready|ResultSet|Row|Done|Prepared|ServerError|null
    {
        if ($payload === '') {
            throw new MysqlProtocolException('An empty packet');
        }
        $first = \ord($payload[0]);
        if ($first === 0xFF && $this->state !== CodecState::Greeting) {
            $this->state = $this->state === CodecState::Authenticating ? CodecState::Closed : CodecState::Ready;
            $this->preparing = null;

            return self::error($payload);
        }

        return match ($this->state) {
            CodecState::Greeting => $this->greeting($payload),
            CodecState::Authenticating => $this->authenticating($payload),
            CodecState::ResponseHeader => $this->responseHeader($payload),
            CodecState::ColumnDefinitions => $this->columnDefinition($payload),
            CodecState::ColumnsEof => $this->columnsEof($payload),
            CodecState::Rows => $this->row($payload),
            CodecState::PrepareParams => $this->prepareDefinition($payload),
            CodecState::Ready, CodecState::Closed => throw new MysqlProtocolException('The server sent a packet nobody asked for'),
        };
    }

    private function greeting(string $payload): ServerError|null
    {
        if (\ord($payload[0]) === 0xFF) {
            $this->state = CodecState::Closed;

            return self::error($payload, hasState: false); // e.g. "Too many connections", before any handshake
        }
        $this->framing->send($this->handshake->respond($payload));
        $this->state = CodecState::Authenticating;

        return null;
    }

    private function authenticating(string $payload): ?Ready
    {
        if (\ord($payload[0]) === 0x00) {
            $this->status = self::ok($payload)->status;
            $this->state = CodecState::Ready;

            return $this->handshake->ready();
        }
        $reply = $this->handshake->continue($payload);
        if ($reply !== null) {
            $this->framing->send($reply);
        }

        return null;
    }

    private function responseHeader(string $payload): Done|Prepared|null
    {
        $first = \ord($payload[0]);
        if ($first === 0x00 && $this->preparing !== null) {
            return $this->prepareOk($payload);
        }
        if ($first === 0x00) {
            return $this->done(self::ok($payload));
        }
        if ($first === 0xFB) {
            throw new MysqlProtocolException('The server asked for a local file (LOAD DATA LOCAL), which Kiln never sends');
        }
        $this->expected = (int) (new Reader($payload))->lenenc();
        $this->columns = [];
        $this->state = CodecState::ColumnDefinitions;

        return null;
    }

    private function columnDefinition(string $payload): null
    {
        $this->columns[] = Column::parse($payload);
        if (\count($this->columns) === $this->expected) {
            $this->state = CodecState::ColumnsEof;
        }

        return null;
    }

    private function columnsEof(string $payload): ResultSet
    {
        self::eof($payload);
        $this->state = CodecState::Rows;

        return new ResultSet($this->columns);
    }

    private function row(string $payload): Row|Done
    {
        if (\ord($payload[0]) === 0xFE && \strlen($payload) < 9) {
            return $this->done(self::eof($payload));
        }
        $in = new Reader($payload);
        $values = [];
        if ($this->binary) {
            $in->skip(1);
            $nulls = $in->bytes(intdiv(\count($this->columns) + 9, 8));
            foreach ($this->columns as $i => $column) {
                $bit = $i + 2;
                $values[$column->name] = (\ord($nulls[$bit >> 3]) & (1 << ($bit & 7))) !== 0 ? null : MysqlTypes::fromBinary($column, $in);
            }
        } else {
            foreach ($this->columns as $column) {
                $values[$column->name] = MysqlTypes::fromText($column, $in->lenencString());
            }
        }

        return new Row($values);
    }

    private function prepareOk(string $payload): ?Prepared
    {
        $in = new Reader($payload);
        $in->skip(1);
        $id = $in->int4();
        $columns = $in->int2();
        $params = $in->int2();
        $this->preparing = new Prepared($id, $params, []);
        $this->columns = [];
        // Parameter definitions then EOF, column definitions then EOF; either part absent when empty.
        $this->paramsLeft = $params > 0 ? $params + 1 : 0;
        $this->columnsLeft = $columns > 0 ? $columns + 1 : 0;
        $this->state = CodecState::PrepareParams;

        return $this->finishPrepare();
    }

    private function prepareDefinition(string $payload): ?Prepared
    {
        if ($this->paramsLeft > 0) {
            $this->paramsLeft--;
        } else {
            $this->columnsLeft--;
            if ($this->columnsLeft > 0) {
                $this->columns[] = Column::parse($payload);
            } else {
                self::eof($payload);
            }
        }

        return $this->finishPrepare();
    }

    private function finishPrepare(): ?Prepared
    {
        if ($this->preparing === null || $this->paramsLeft > 0 || $this->columnsLeft > 0) {
            return null;
        }
        $prepared = new Prepared($this->preparing->id, $this->preparing->paramCount, $this->columns);
        $this->preparing = null;
        $this->state = CodecState::Ready;

        return $prepared;
    }

    private function done(Done $done): Done
    {
        $this->status = $done->status;
        $this->state = $done->moreResults ? CodecState::ResponseHeader : CodecState::Ready;

        return $done;
    }

    private static function ok(string $payload): Done
    {
        $in = new Reader($payload);
        $in->skip(1);
        $affected = (int) $in->lenenc();
        $insertId = (int) $in->lenenc();
        $status = $in->int2();

        return new Done($affected, $insertId, $status, ($status & self::SERVER_MORE_RESULTS_EXISTS) !== 0);
    }

    private static function eof(string $payload): Done
    {
        if (\ord($payload[0]) !== 0xFE || \strlen($payload) < 5) {
            throw new MysqlProtocolException('Expected an EOF packet');
        }
        $status = Reader::int('v', substr($payload, 3, 2));

        return new Done(0, 0, $status, ($status & self::SERVER_MORE_RESULTS_EXISTS) !== 0);
    }

    private static function error(string $payload, bool $hasState = true): ServerError
    {
        $in = new Reader($payload);
        $in->skip(1);
        $code = $in->int2();
        $state = 'HY000';
        if ($hasState && ($payload[3] ?? '') === '#') {
            $in->skip(1);
            $state = $in->bytes(5);
        }

        return new ServerError($code, $state, $in->rest());
    }
}
