<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

/** One HTTP response as the Browser saw it. Header names are lower-cased; a repeated header keeps every value. */
final class Page
{
    /** @param array<string, list<string>> $headers */
    public function __construct(
        public readonly string $method,
        public readonly string $url,
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {}

    public function header(string $name): string
    {
        return implode(', ', $this->headers[strtolower($name)] ?? []);
    }

    /** The Location header as a path with its query (the scheme and authority dropped), or '' when absent. */
    public function location(): string
    {
        $location = $this->header('location');
        if ($location === '') {
            return '';
        }
        $parts = parse_url($location);
        return ($parts['path'] ?? '/') . (isset($parts['query']) ? '?' . $parts['query'] : '')
            . (isset($parts['fragment']) ? '#' . $parts['fragment'] : '');
    }

    /** @return array<mixed> the body decoded as JSON (an empty array when it is not JSON) */
    public function json(): array
    {
        $data = json_decode($this->body, true);
        return \is_array($data) ? $data : [];
    }

    /** The first capture group of $regex in the body, or '' when it does not match. */
    public function match(string $regex): string
    {
        return preg_match($regex, $this->body, $m) === 1 ? html_entity_decode($m[1], ENT_QUOTES | ENT_HTML5) : '';
    }

    /** A value of an <input name=...> in the body, or ''. */
    public function input(string $name): string
    {
        $quoted = preg_quote($name, '~');
        foreach (['~<input[^>]*\bname=["\']' . $quoted . '["\'][^>]*>~i', '~<input[^>]*\bid=["\']' . $quoted . '["\'][^>]*>~i'] as $regex) {
            if (preg_match($regex, $this->body, $tag) === 1 && preg_match('~\bvalue=["\']([^"\']*)["\']~i', $tag[0], $m) === 1) {
                return html_entity_decode($m[1], ENT_QUOTES | ENT_HTML5);
            }
        }
        return '';
    }

    /**
     * The fields a browser would submit from the form whose opening tag matches $formRegex: inputs (not buttons),
     * textareas, and the selected option of each select.
     *
     * @return array<string, string>
     */
    public function form(string $formRegex): array
    {
        if (preg_match('~<form[^>]*' . $formRegex . '[^>]*>(.*?)</form>~is', $this->body, $form) !== 1) {
            return [];
        }
        $fields = [];
        preg_match_all('~<input\b[^>]*>~i', $form[1], $inputs);
        foreach ($inputs[0] as $tag) {
            $name = self::attribute($tag, 'name');
            $type = strtolower(self::attribute($tag, 'type'));
            if ($name === '' || \in_array($type, ['submit', 'button', 'image', 'reset', 'file'], true)
                || (\in_array($type, ['checkbox', 'radio'], true) && stripos($tag, 'checked') === false)) {
                continue;
            }
            $fields[$name] = self::attribute($tag, 'value');
        }
        preg_match_all('~<textarea\b([^>]*)>(.*?)</textarea>~is', $form[1], $areas, PREG_SET_ORDER);
        foreach ($areas as $area) {
            $fields[self::attribute($area[1], 'name')] = html_entity_decode($area[2], ENT_QUOTES | ENT_HTML5);
        }
        return $fields;
    }

    private static function attribute(string $tag, string $name): string
    {
        return preg_match('~\b' . $name . '=(["\'])(.*?)\1~is', $tag, $m) === 1 ? html_entity_decode($m[2], ENT_QUOTES | ENT_HTML5) : '';
    }

    /** A short description for failure messages: request, status, Location and the start of the body. */
    public function summary(int $bodyBytes = 300): string
    {
        $text = trim((string) preg_replace('~\s+~', ' ', strip_tags($this->body)));
        return "{$this->method} {$this->url} → {$this->status}"
            . ($this->header('location') !== '' ? ' Location: ' . $this->header('location') : '')
            . ' [' . $this->header('content-type') . '] ' . substr($text, 0, $bodyBytes);
    }
}
