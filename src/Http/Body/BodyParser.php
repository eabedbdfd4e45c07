<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Multipart\MultipartParser;
use Kiln\Http\Request;
use Kiln\Http\UploadedFile;

/**
 * Decodes a request body by its Content-Type: application/x-www-form-urlencoded, JSON (application/json
 * and application/*+json), multipart/form-data. Other types have no fields.
 *
 * @internal Request::parsedBody(), files() and json() are the API
 */
final class BodyParser
{
    private const PIECE = 65536;

    /**
     * @return array{array<array-key, mixed>, array<array-key, mixed>, list<UploadedFile>} fields, files as
     *         nested by name, and every file (for the cleanup when the exchange ends)
     * @throws BadRequestBodyException
     */
    public static function parse(Request $request, BodyLimits $limits): array
    {
        $type = self::mediaType($request);
        if ($request->bodySize() === 0) {
            return [[], [], []];
        }
        if ($type === 'application/x-www-form-urlencoded') {
            return [self::urlencoded(self::formBody($request, $limits), $limits), [], []];
        }
        if ($type === 'application/json' || (str_starts_with($type, 'application/') && str_ends_with($type, '+json'))) {
            $data = self::json($request, $limits);
            return [\is_array($data) ? $data : [], [], []];
        }
        if ($type === 'multipart/form-data') {
            [$fields, $files] = self::multipart($request, $limits);
            try {
                return [FormNames::fields($fields, $limits), FormNames::files($files, $limits), array_column($files, 1)];
            } catch (BadRequestBodyException $e) {
                foreach ($files as [, $file]) {
                    $file->discard();
                }
                throw $e;
            }
        }
        return [[], [], []];
    }

    /**
     * The body decoded as JSON, objects as arrays; null for an empty body.
     *
     * @throws BadRequestBodyException
     */
    public static function json(Request $request, BodyLimits $limits): mixed
    {
        $body = self::formBody($request, $limits);
        if ($body === '') {
            return null;
        }
        try {
            return json_decode($body, true, max(1, $limits->depth + 1), \JSON_THROW_ON_ERROR | \JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            throw new BadRequestBodyException('Invalid JSON body: ' . $e->getMessage(), 400, $e);
        }
    }

    /** Lower-cased media type of the Content-Type, without parameters. */
    public static function mediaType(Request $request): string
    {
        $type = $request->header('content-type') ?? '';
        $semi = strpos($type, ';');
        return strtolower(trim($semi === false ? $type : substr($type, 0, $semi), " \t"));
    }

    /**
     * @return array<array-key, mixed>
     * @throws BadRequestBodyException
     */
    private static function urlencoded(string $body, BodyLimits $limits): array
    {
        $pairs = 0;
        foreach (explode('&', $body) as $pair) {
            if ($pair === '') {
                continue;
            }
            if (++$pairs > $limits->fields) {
                throw new BadRequestBodyException("More than {$limits->fields} form fields", 413);
            }
            $eq = strpos($pair, '=');
            FormNames::checkDepth(urldecode($eq === false ? $pair : substr($pair, 0, $eq)), $limits);
        }
        parse_str($body, $fields);
        return $fields;
    }

    /** @throws BadRequestBodyException */
    private static function formBody(Request $request, BodyLimits $limits): string
    {
        if ($request->bodySize() > $limits->formBytes) {
            throw new BadRequestBodyException("Body over {$limits->formBytes} bytes", 413);
        }
        return $request->body();
    }

    /**
     * @return array{list<array{string, string}>, list<array{string, UploadedFile}>}
     * @throws BadRequestBodyException
     */
    private static function multipart(Request $request, BodyLimits $limits): array
    {
        $parser = new MultipartParser(MultipartParser::boundary($request->header('content-type') ?? ''), $limits);
        if (!$request->isBodySpooled()) {
            $parser->feed($request->body());
            return $parser->finish();
        }
        $stream = $request->bodyStream();
        while (!feof($stream)) {
            $piece = fread($stream, self::PIECE);
            if ($piece === false || $piece === '') {
                break;
            }
            $parser->feed($piece);
        }
        return $parser->finish();
    }
}
