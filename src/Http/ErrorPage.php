<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Wire\ResponseEncoder;

/**
 * The one renderer of error pages in one of three forms (App's ErrorHandler, and ErrorResponse::forRequest()
 * for the errors Kiln makes itself). Everything that comes from the error is escaped for its
 * form; the debug details (class, message, file:line, trace, previous errors) appear only when given.
 */
final class ErrorPage
{
    /** @param \Throwable|null $debug the error to disclose, with its previous ones (debug mode only) */
    public static function render(ErrorPageFormat $format, int $status, string $message, ?\Throwable $debug = null): Response
    {
        $body = match ($format) {
            ErrorPageFormat::Json => self::json($status, $message, $debug),
            ErrorPageFormat::Html => self::html($status, $message, $debug),
            ErrorPageFormat::Text => self::text($status, $message, $debug),
        };
        return new Response($status, ['Content-Type' => $format->contentType()], $body);
    }

    private static function json(int $status, string $message, ?\Throwable $debug): string
    {
        $data = ['error' => ['status' => $status, 'message' => $message]];
        if ($debug !== null) {
            $data['debug'] = self::describe($debug) + [
                'trace' => explode("\n", $debug->getTraceAsString()),
                'previous' => array_map(self::describe(...), \array_slice(self::chain($debug), 1)),
            ];
        }
        return json_encode($data, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n";
    }

    /** @return array{class: string, message: string, file: string, line: int} */
    private static function describe(\Throwable $e): array
    {
        return ['class' => $e::class, 'message' => $e->getMessage(), 'file' => $e->getFile(), 'line' => $e->getLine()];
    }

    private static function text(int $status, string $message, ?\Throwable $debug): string
    {
        $text = self::title($status) . "\n";
        if ($message !== ResponseEncoder::reason($status)) {
            $text .= $message . "\n";
        }
        foreach (self::chain($debug) as $e) {
            $text .= "\n" . $e::class . ': ' . $e->getMessage() . "\n  at " . $e->getFile() . ':' . $e->getLine()
                . "\n" . $e->getTraceAsString() . "\n";
        }
        return $text;
    }

    private static function html(int $status, string $message, ?\Throwable $debug): string
    {
        $title = self::escape(self::title($status));
        $details = '';
        foreach (self::chain($debug) as $e) {
            $details .= '<section><h2>' . self::escape($e::class) . '</h2><p>' . self::escape($e->getMessage()) . '</p>'
                . '<p><code>' . self::escape($e->getFile() . ':' . $e->getLine()) . '</code></p>'
                . '<pre>' . self::escape($e->getTraceAsString()) . "</pre></section>\n";
        }
        $style = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}'
            . 'main{max-width:60rem;margin:10vh auto;padding:0 1.5rem}h1{font-size:1.75rem;margin:0 0 .5rem}'
            . 'section{margin-top:2rem;border-top:1px solid #ddd}h2{font-size:1.1rem}'
            . 'pre{overflow:auto;background:#f0f0f0;padding:1rem;font-size:.85rem}';
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            . "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            . "<title>$title</title>\n<style>$style</style>\n</head>\n<body>\n<main>\n<h1>$title</h1>\n"
            . '<p>' . self::escape($message) . "</p>\n" . $details . "</main>\n</body>\n</html>\n";
    }

    private static function title(int $status): string
    {
        return $status . ' ' . ResponseEncoder::reason($status);
    }

    private static function escape(string $text): string
    {
        return htmlspecialchars($text, ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML5, 'UTF-8');
    }

    /**
     * The error followed by its previous errors (none without an error).
     *
     * @return list<\Throwable>
     */
    private static function chain(?\Throwable $error): array
    {
        $chain = [];
        for ($e = $error; $e !== null && \count($chain) < 20; $e = $e->getPrevious()) {
            $chain[] = $e;
        }
        return $chain;
    }
}
