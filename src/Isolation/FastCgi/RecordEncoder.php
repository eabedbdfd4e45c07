<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * Encodes records to bytes. Every record is padded to a multiple of 8 bytes (spec §3.3 recommends it);
 * stream content longer than 65535 bytes is split over several records. Pure functions, no state.
 */
final class RecordEncoder
{
    public const VERSION = 1;

    private function __construct() {}

    /** One record; \ValueError when $content is longer than 65535 bytes. */
    public static function record(int $type, int $requestId, string $content = ''): string
    {
        $length = \strlen($content);
        if ($length > Record::MAX_CONTENT || $type < 1 || $type > 255 || $requestId < 0 || $requestId > 65535) {
            throw new \ValueError('A FastCGI record has a type 1-255, a request id 0-65535 and at most 65535 bytes of content');
        }
        $padding = -$length & 7;

        return \pack('CCnnCx', self::VERSION, $type, $requestId, $length, $padding)
            . $content . ($padding === 0 ? '' : \substr("\0\0\0\0\0\0\0", 0, $padding));
    }

    /**
     * $data of a stream type as records of at most 65535 bytes ('' for empty data), followed by the empty
     * record that ends the stream when $end.
     */
    public static function stream(RecordType $type, int $requestId, string $data, bool $end = false): string
    {
        if (!$type->isStream()) {
            throw new \ValueError("{$type->name} is not a stream record type");
        }
        $length = \strlen($data);
        if ($length <= Record::MAX_CONTENT) { // one record or none: no copy of $data
            $out = $length === 0 ? '' : self::record($type->value, $requestId, $data);

            return $end ? $out . self::record($type->value, $requestId) : $out;
        }
        $out = '';
        for ($offset = 0; $offset < $length; $offset += Record::MAX_CONTENT) {
            $out .= self::record($type->value, $requestId, \substr($data, $offset, Record::MAX_CONTENT));
        }

        return $end ? $out . self::record($type->value, $requestId) : $out;
    }

    public static function beginRequest(int $requestId, Role $role = Role::Responder, bool $keepConnection = false): string
    {
        self::assertRequestId($requestId);

        return self::record(
            RecordType::BeginRequest->value,
            $requestId,
            \pack('nCx5', $role->value, $keepConnection ? BeginRequest::KEEP_CONN : 0),
        );
    }

    public static function abortRequest(int $requestId): string
    {
        self::assertRequestId($requestId);

        return self::record(RecordType::AbortRequest->value, $requestId);
    }

    public static function endRequest(int $requestId, int $appStatus = 0, ProtocolStatus $status = ProtocolStatus::RequestComplete): string
    {
        self::assertRequestId($requestId);
        if ($appStatus < 0 || $appStatus > 0xFFFFFFFF) {
            throw new \ValueError("The application status is 0-4294967295, got {$appStatus}");
        }

        return self::record(RecordType::EndRequest->value, $requestId, \pack('NCx3', $appStatus, $status->value));
    }

    /**
     * The whole PARAMS stream of a request, ended by its empty record. A pair may straddle two records.
     *
     * @param array<string, string> $params
     */
    public static function params(int $requestId, array $params): string
    {
        self::assertRequestId($requestId);

        return self::stream(RecordType::Params, $requestId, NameValuePairs::encode($params), true);
    }

    /** @param list<string> $names e.g. FCGI_MAX_CONNS, FCGI_MAX_REQS, FCGI_MPXS_CONNS */
    public static function getValues(array $names): string
    {
        return self::management(RecordType::GetValues, NameValuePairs::encode(\array_fill_keys($names, '')));
    }

    /** @param array<string, string> $values */
    public static function getValuesResult(array $values): string
    {
        return self::management(RecordType::GetValuesResult, NameValuePairs::encode($values));
    }

    public static function unknownType(int $type): string
    {
        if ($type < 1 || $type > 255) {
            throw new \ValueError("A record type is 1-255, got {$type}");
        }

        return self::record(RecordType::UnknownType->value, 0, \pack('Cx7', $type));
    }

    private static function management(RecordType $type, string $content): string
    {
        if (\strlen($content) > Record::MAX_CONTENT) {
            throw new \ValueError("A {$type->name} record holds at most 65535 bytes of pairs");
        }

        return self::record($type->value, 0, $content);
    }

    private static function assertRequestId(int $requestId): void
    {
        if ($requestId < 1 || $requestId > 65535) {
            throw new \ValueError("A request id is 1-65535 (0 is for management records), got {$requestId}");
        }
    }
}
