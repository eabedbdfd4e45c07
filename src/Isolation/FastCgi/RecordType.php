<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** The record types of FastCGI 1.0 (spec §8). A decoder also passes on types it does not know, as raw numbers. */
enum RecordType: int
{
    case BeginRequest = 1;
    case AbortRequest = 2;
    case EndRequest = 3;
    case Params = 4;
    case Stdin = 5;
    case Stdout = 6;
    case Stderr = 7;
    case Data = 8;
    case GetValues = 9;
    case GetValuesResult = 10;
    case UnknownType = 11;

    /** Management records concern the connection, not a request: their request id is always 0. */
    public function isManagement(): bool
    {
        return $this === self::GetValues || $this === self::GetValuesResult || $this === self::UnknownType;
    }

    /** Stream records carry a byte stream in any number of records, ended by one with no content. */
    public function isStream(): bool
    {
        return match ($this) {
            self::Params, self::Stdin, self::Stdout, self::Stderr, self::Data => true,
            default => false,
        };
    }

    /** The exact content length of a fixed-size record body, null for variable-length records. */
    public function fixedLength(): ?int
    {
        return match ($this) {
            self::BeginRequest, self::EndRequest, self::UnknownType => 8,
            self::AbortRequest => 0,
            default => null,
        };
    }
}
