<?php
// Declared without an existence check: the tier replaces the worker after the request, so nothing is left behind.
function dev_fixture_top_level(): string
{
    return 'top level';
}
echo dev_fixture_top_level();
